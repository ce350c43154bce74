// Must not compile: cudaLaunchKernel needs the kernel's type, not a void*.
__global__ void k(int* p) { *p = 1; }
int main() {
    int* p = nullptr;
    void* args[] = {&p};
    return cudaLaunchKernel(reinterpret_cast<void*>(k), dim3(1), dim3(1), args, 0, nullptr);
}
