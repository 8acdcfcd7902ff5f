/* A floating sum in a 1-D loop (reduction(+: s)): strip-mined into tiles run in
   order, its accumulations keep the loop's order, so it is tiled exactly; padded
   iterations of the last tile skip the accumulation. */
void sum1d(int n, const float x[n], float *sum) {
  float s = *sum;
#pragma omp target teams distribute parallel for reduction(+: s) map(to: x[0:n])
  for (int i = 0; i < n; i++)
    s += x[i];
  *sum = s;
}
