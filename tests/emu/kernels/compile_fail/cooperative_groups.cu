// Must not compile: cooperative groups are not emulated.
#include <cooperative_groups.h>
int main() { return 0; }
