// AUTHOR: fintelia
// ISSUE: #484
// FIX: https://github.com/Kangz/glslpp-rs/pull/30
// NOTE: Shader altered to use correct syntax
#version 450 core

#if 0
#endif

void main() { }
