// AUTHOR: cwfitzgerald
// ISSUE: #5246

void main() {
    for (int x = 0; x < 10; x++) {
        for (int y = 0; y < 10; y++) {
            for (int z = 0; z < 10; z++) {
                ;
            }
        }
    }
}