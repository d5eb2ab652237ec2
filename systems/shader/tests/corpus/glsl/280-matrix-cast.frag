// AUTHOR: pjoe
// ISSUE: #280
// FIX: #898
#version 450

void main() {
    mat4 a = mat4(1);
}
