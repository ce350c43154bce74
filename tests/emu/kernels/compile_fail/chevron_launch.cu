// Must not compile: launches are written MEMPLACE_LAUNCH(kernel, grid, block, shmem, stream, args...).
__global__ void k(int* p) { *p = 1; }
int main() {
    int* p = nullptr;
    k<<<1, 1>>>(p);
    return 0;
}
