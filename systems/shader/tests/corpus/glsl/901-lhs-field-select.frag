// AUTHOR: JCapucho
// ISSUE: #901
// FIX: #948
#version 450

void main() {
    vec4 a = vec4(1.0);
    a.x = 2.0;
}
