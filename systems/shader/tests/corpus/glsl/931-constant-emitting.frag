// AUTHOR: jakobhellermann
// ISSUE: #931
// FIX: #933
#version 450

const int constant = 10;

float function() {
    return 0.0;
}

void main() {}
