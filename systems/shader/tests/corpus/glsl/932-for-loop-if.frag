// AUTHOR: jakobhellermann
// ISSUE: #932
// FIX: #935
#version 450

void main() {
    for (int i = 0; i < 1; i += 1) {}
}
