// AUTHOR: Napokue
// ISSUE: #277
// FIX: #278
#version 450

void main() {
    float a = float(1);
}
