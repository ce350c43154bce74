// Must not compile: tex1D reads CUDA arrays, which are not emulated.
__global__ void k(cudaTextureObject_t t, float* out) { out[0] = tex1D<float>(t, 0.5f); }
int main() { return 0; }
