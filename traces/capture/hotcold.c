/* A hot/cold workload for access traces: fills a region, then passes over it, touching the
 * hot first quarter three times per pass and the whole region once. One word per 512 bytes. */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], 0, 10) : 16;
    int passes = argc > 2 ? atoi(argv[2]) : 6;
    size_t bytes = mib << 20, step = 512 / sizeof(long), words = bytes / sizeof(long);
    long *region = malloc(bytes);
    if (!region) return 1;
    for (size_t i = 0; i < words; i += step) region[i] = (long)i;
    long sum = 0;
    for (int p = 0; p < passes; p++) {
        for (int h = 0; h < 3; h++)
            for (size_t i = 0; i < words / 4; i += step) sum += region[i];
        for (size_t i = 0; i < words; i += step) region[i] += sum & 1;
    }
    return (int)(sum & 1);
}
