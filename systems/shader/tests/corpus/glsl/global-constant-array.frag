#version 450 core

uint i;
const float[2] array = { 1.0, 2.0 };

void main() { array[i]; }
