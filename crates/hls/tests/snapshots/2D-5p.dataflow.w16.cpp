// Tessera kernel tessera_snap
// Region: bench/stencils/2D-5p.c:38:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: dataflow — load, compute and store processes under #pragma HLS DATAFLOW,
// connected by streams of 16-element words: every input element read from DDR once
// (whole rows of its Load box), the reuse window in on-chip buffers, 16 outputs per
// cycle, rows written back in strobed bursts. Every implicit conversion of the source is
// an explicit cast and each lane evaluates the source's expression, so results match the
// host bit for bit.

#include "tessera_wide.h"
#include "tessera_dataflow.h"

// Load process of 'A': the rows of its Load box in row order, each element read once.
static void tessera_snap_load_A(hls::burst_maxi<tessera::wide_t<16, float>> A, hls::stream<tessera::wide_t<16, float>> &A_in, float fac) {
  (void)fac;
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_L1 = 1L;
  (void)tdf_L1;
  const long tdf_n0 = 36L - tdf_L0;
  if (tdf_n0 <= 0) return;
  const long tdf_rows = (tdf_n0 + 2) * 1;
  const long tdf_n = 53L;
  tessera_df_request_first<16, 64>(A, (long)(tdf_L0 - 1 + 0L) * (long)(53L) + (tdf_L1 - 1), tdf_n);
  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {
    const bool tdf_next = tdf_r + 1 < tdf_rows;
    tessera_df_read_row<16, 64, float>(A, (long)(tdf_L0 - 1 + tdf_r) * (long)(53L) + (tdf_L1 - 1), tdf_n, A_in, tdf_next ? (long)(tdf_L0 - 1 + tdf_r + 1) * (long)(53L) + (tdf_L1 - 1) : 0L, tdf_next ? tdf_n : 0L);
  }
}

// Compute process: the reuse window in on-chip buffers, 16 lanes per cycle.
static void tessera_snap_compute(hls::stream<tessera::wide_t<16, float>> &A_in, hls::stream<tessera::wide_t<16, float>> &X_out, float fac) {
  (void)fac;
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_L1 = 1L;
  (void)tdf_L1;
  const long tdf_n0 = 36L - tdf_L0;
  if (tdf_n0 <= 0) return;
  // 'A': 4 slots (the 3 rows the stencil spans and one being loaded), 4 words per row.
  TESSERA_PROCESS_STATE tessera::wide_t<16, float> A_lb[4][4];
#pragma HLS ARRAY_PARTITION variable=A_lb dim=1 complete
#pragma HLS ARRAY_PARTITION variable=A_lb dim=2 cyclic factor=2
#pragma HLS BIND_STORAGE variable=A_lb type=ram_2p impl=bram
  // Fill: the first rows of every window.
  for (int tdf_r = 0; tdf_r < 3; tdf_r++) {
    for (int tdf_q = 0; tdf_q < 4; tdf_q++) {
#pragma HLS PIPELINE II=1
      A_lb[tdf_r][tdf_q] = A_in.read();
    }
  }
  int A_head = 0;  // the slot of the window's first row
  for (long tdf_i = 0; tdf_i < tdf_n0; tdf_i++) {
    const bool tdf_more = tdf_i + 1 < tdf_n0;  // a next row to load
    const int A_k0 = A_head + 0 >= 4 ? A_head + 0 - 4 : A_head + 0;
    (void)A_k0;
    const int A_k1 = A_head + 1 >= 4 ? A_head + 1 - 4 : A_head + 1;
    (void)A_k1;
    const int A_k2 = A_head + 2 >= 4 ? A_head + 2 - 4 : A_head + 2;
    (void)A_k2;
    const int A_k3 = A_head + 3 >= 4 ? A_head + 3 - 4 : A_head + 3;
    (void)A_k3;
    int A_r = 0, A_q = 0;  // next row / word to load into slot A_k3
    int tdf_oj = 0, tdf_ow = 0;  // next output row / word
    const int tdf_steps = tdf_more ? 4 : 4;
    for (int tdf_t = 0; tdf_t < tdf_steps; tdf_t++) {
#pragma HLS PIPELINE II=1
      if (tdf_more && tdf_t < 4) {
        A_lb[A_k3][A_q] = A_in.read();
        A_q++;
        (void)A_r;
      }
      if (tdf_t < 4) {
        tessera::wide_t<16, float> X_o = 0;
#ifndef TESSERA_HLS_VITIS
        if ((tdf_ow + 1) * 16 <= 51) {
          const tessera::wide_t<16, float> *A_w0 = &A_lb[A_k0][tdf_ow];
          const tessera::wide_t<16, float> *A_w1 = &A_lb[A_k1][tdf_ow];
          const tessera::wide_t<16, float> *A_w2 = &A_lb[A_k2][tdf_ow];
          for (int tdf_l = 0; tdf_l < 16; tdf_l++) {
            const long tdf_j = tdf_ow * 16 + tdf_l;
            const int i = (int)(tdf_L0 + tdf_i);
            (void)i;
            const int j = (int)(tdf_L1 + tdf_j);
            (void)j;
            tessera::set_lane<float>(X_o, tdf_l, static_cast<float>(fac * (tessera::window_lane<float>(A_w0, 1 + tdf_l) + tessera::window_lane<float>(A_w2, 1 + tdf_l) + tessera::window_lane<float>(A_w1, tdf_l) + tessera::window_lane<float>(A_w1, 2 + tdf_l))));
          }
        } else
#endif
        {
        tessera::wide_t<16, float> A_w0[2];
        for (int tdf_d = 0; tdf_d < 2; tdf_d++) {
#pragma HLS UNROLL
          const int tdf_q = tdf_ow + tdf_d;
          A_w0[tdf_d] = tdf_q < 4 ? A_lb[A_k0][tdf_q] : tessera::wide_t<16, float>(0);
        }
        tessera::wide_t<16, float> A_w1[2];
        for (int tdf_d = 0; tdf_d < 2; tdf_d++) {
#pragma HLS UNROLL
          const int tdf_q = tdf_ow + tdf_d;
          A_w1[tdf_d] = tdf_q < 4 ? A_lb[A_k1][tdf_q] : tessera::wide_t<16, float>(0);
        }
        tessera::wide_t<16, float> A_w2[2];
        for (int tdf_d = 0; tdf_d < 2; tdf_d++) {
#pragma HLS UNROLL
          const int tdf_q = tdf_ow + tdf_d;
          A_w2[tdf_d] = tdf_q < 4 ? A_lb[A_k2][tdf_q] : tessera::wide_t<16, float>(0);
        }
        for (int tdf_l = 0; tdf_l < 16; tdf_l++) {
#pragma HLS UNROLL
          const long tdf_j = tdf_ow * 16 + tdf_l;
          if (tdf_j < 51) {
            const int i = (int)(tdf_L0 + tdf_i);
            (void)i;
            const int j = (int)(tdf_L1 + tdf_j);
            (void)j;
            tessera::set_lane<float>(X_o, tdf_l, static_cast<float>(fac * (tessera::window_lane<float>(A_w0, 1 + tdf_l) + tessera::window_lane<float>(A_w2, 1 + tdf_l) + tessera::window_lane<float>(A_w1, tdf_l) + tessera::window_lane<float>(A_w1, 2 + tdf_l))));
          }
        }
        }
        X_out.write(X_o);
        tdf_ow++;
        (void)tdf_oj;
      }
    }
    A_head = A_head + 1 == 4 ? 0 : A_head + 1;
  }
}

// Store process of 'X': the rows of its Store set, partial words strobed.
static void tessera_snap_store_X(hls::burst_maxi<tessera::wide_t<16, float>> X, hls::stream<tessera::wide_t<16, float>> &X_out, float fac) {
  (void)fac;
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_L1 = 1L;
  (void)tdf_L1;
  const long tdf_n0 = 36L - tdf_L0;
  if (tdf_n0 <= 0) return;
  const long tdf_rows = tdf_n0 * 1;
  int tdf_pending = 0;
  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {
    tessera_df_write_row<16, 64, 8, float>(X, (long)(tdf_L0 + tdf_r) * (long)(53L) + (tdf_L1), 51L, X_out, tdf_pending);
  }
  tessera_df_write_drain(X, tdf_pending);
}

extern "C" void tessera_snap(hls::burst_maxi<tessera::wide_t<16, float>> A, hls::burst_maxi<tessera::wide_t<16, float>> X, float fac) {
#pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=m_axi port=X offset=slave bundle=gmem1 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=s_axilite port=fac
#pragma HLS INTERFACE mode=s_axilite port=return
#pragma HLS DATAFLOW
  hls::stream<tessera::wide_t<16, float>, 64> A_in("A_in");
#pragma HLS STREAM variable=A_in depth=64
  hls::stream<tessera::wide_t<16, float>, 64> X_out("X_out");
#pragma HLS STREAM variable=X_out depth=64
#ifdef TESSERA_HLS_VITIS
  tessera_snap_load_A(A, A_in, fac);
  tessera_snap_compute(A_in, X_out, fac);
  tessera_snap_store_X(X, X_out, fac);
#else
  // Emulation: the processes as coroutines, each stream bounded by its depth.
  tessera::emu::dataflow tdf_region("tessera_snap");
  tdf_region.process("load_A", [&] { tessera_snap_load_A(A, A_in, fac); });
  tdf_region.process("compute", [&] { tessera_snap_compute(A_in, X_out, fac); });
  tdf_region.process("store_X", [&] { tessera_snap_store_X(X, X_out, fac); });
  tdf_region.run();
#endif
}
