// AUTHOR: Foltik
// ISSUE: #896
// FIX: #897
#version 450

layout(push_constant) uniform PushConstants {
    float example;
} c;

void main() {}
