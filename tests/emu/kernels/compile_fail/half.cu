// Must not compile: half precision is not emulated.
#include <cuda_fp16.h>
int main() { return 0; }
