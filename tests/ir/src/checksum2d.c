/* Integer reductions over a 2-D image: a sum, a bitwise xor and a maximum written as
   an if, exact in any order, so every legal tiling (and intra-tile permutation) may
   be chosen. */
void checksum2d(int n, int m, const int img[n][m], long *total, unsigned *hash, int *peak) {
  long t = 0;
  unsigned h = 0;
  int p = -1;
#pragma omp target teams distribute parallel for collapse(2) reduction(+: t) reduction(^: h) reduction(max: p) map(to: img[0:n][0:m])
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      t += img[i][j];
      h ^= (unsigned)img[i][j] * 2654435761u;
      if (img[i][j] > p) p = img[i][j];
    }
  *total = t;
  *hash = h;
  *peak = p;
}
