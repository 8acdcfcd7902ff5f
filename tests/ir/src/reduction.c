/* The paper's corner case (Sec. 4, step 3): a value updated in every iteration.
   s[0] = s[0] + A[i] has flow, anti and output dependences on s[0]; padded iterations
   would keep updating it, so the write is nc and guarded, and so is the read. */
void reduce(int n, const float A[n], float s[1]) {
#pragma omp target teams distribute parallel for map(to: A[0:n]) map(tofrom: s[0:1])
  for (int i = 0; i < n; i++)
    s[0] = s[0] + A[i];
}
