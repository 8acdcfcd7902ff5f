// Tessera kernel tessera_snap
// Region: bench/stencils/1D-jacobi.c:33:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: dataflow — load, compute and store processes under #pragma HLS DATAFLOW,
// connected by streams of 16-element words: every input element read from DDR once
// (whole rows of its Load box), the reuse window in on-chip buffers, 16 outputs per
// cycle, rows written back in strobed bursts. Every implicit conversion of the source is
// an explicit cast and each lane evaluates the source's expression, so results match the
// host bit for bit.

#include "tessera_wide.h"
#include "tessera_dataflow.h"

// Load process of 'A': the rows of its Load box in row order, each element read once.
static void tessera_snap_load_A(hls::burst_maxi<tessera::wide_t<16, float>> A, hls::stream<tessera::wide_t<16, float>> &A_in) {
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_n0 = 1998L - tdf_L0;
  if (tdf_n0 <= 0) return;
  const long tdf_rows = 1L;
  const long tdf_n = tdf_n0 + 2;
  tessera_df_request_first<16, 64>(A, (long)(tdf_L0 - 1), tdf_n);
  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {
    const bool tdf_next = tdf_r + 1 < tdf_rows;
    tessera_df_read_row<16, 64, float>(A, (long)(tdf_L0 - 1), tdf_n, A_in, tdf_next ? (long)(tdf_L0 - 1) : 0L, tdf_next ? tdf_n : 0L);
  }
}

// Compute process: the reuse window in on-chip buffers, 16 lanes per cycle.
static void tessera_snap_compute(hls::stream<tessera::wide_t<16, float>> &A_in, hls::stream<tessera::wide_t<16, float>> &B_out) {
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_n0 = 1998L - tdf_L0;
  if (tdf_n0 <= 0) return;
  // Each output word needs the input words from its own to 1 word(s) ahead and is computed 2 word(s) after its own was read: a ring of 3.
  TESSERA_PROCESS_STATE tessera::wide_t<16, float> A_ring[3];
#pragma HLS ARRAY_PARTITION variable=A_ring dim=1 complete
#ifndef TESSERA_HLS_VITIS
  TESSERA_PROCESS_STATE tessera::wide_t<16, float> A_lin[6];
#endif
  const long A_words = (tdf_n0 + 2 + 15) / 16;
  const long tdf_out_words = (tdf_n0 + 15) / 16;
  const long tdf_steps = (A_words > tdf_out_words + 2 ? A_words : tdf_out_words + 2);
  int tdf_pos = 0;
  for (long tdf_s = 0; tdf_s < tdf_steps; tdf_s++) {
#pragma HLS PIPELINE II=1
    if (tdf_s < A_words) {
      A_ring[tdf_pos] = A_in.read();
#ifndef TESSERA_HLS_VITIS
      A_lin[tdf_pos] = A_lin[tdf_pos + 3] = A_ring[tdf_pos];
#endif
    }
    if (tdf_s >= 2 && tdf_s - 2 < tdf_out_words) {
      const long tdf_ow = tdf_s - 2;
      tessera::wide_t<16, float> B_o = 0;
#ifndef TESSERA_HLS_VITIS
      if ((tdf_ow + 1) * 16 <= tdf_n0) {
        const tessera::wide_t<16, float> *A_w = &A_lin[tdf_pos + 1];
        for (int tdf_l = 0; tdf_l < 16; tdf_l++) {
          const long tdf_j = tdf_ow * 16 + tdf_l;
          const int i = (int)(tdf_L0 + tdf_j);
          (void)i;
          tessera::set_lane<float>(B_o, tdf_l, static_cast<float>((float)(0.33333 * (double)(tessera::window_lane<float>(A_w, tdf_l) + tessera::window_lane<float>(A_w, 1 + tdf_l) + tessera::window_lane<float>(A_w, 2 + tdf_l)))));
        }
      } else
#endif
      {
      tessera::wide_t<16, float> A_w[2];
      for (int tdf_d = 0; tdf_d < 2; tdf_d++) {
#pragma HLS UNROLL
        const int tdf_q = tdf_pos + 1 + tdf_d;  // word tdf_ow + tdf_d
        A_w[tdf_d] = A_ring[tdf_q >= 3 ? tdf_q - 3 : tdf_q];
      }
      for (int tdf_l = 0; tdf_l < 16; tdf_l++) {
#pragma HLS UNROLL
        const long tdf_j = tdf_ow * 16 + tdf_l;
        if (tdf_j < tdf_n0) {
          const int i = (int)(tdf_L0 + tdf_j);
          (void)i;
          tessera::set_lane<float>(B_o, tdf_l, static_cast<float>((float)(0.33333 * (double)(tessera::window_lane<float>(A_w, tdf_l) + tessera::window_lane<float>(A_w, 1 + tdf_l) + tessera::window_lane<float>(A_w, 2 + tdf_l)))));
        }
      }
      }
      B_out.write(B_o);
    }
    tdf_pos = tdf_pos + 1 == 3 ? 0 : tdf_pos + 1;
  }
}

// Store process of 'B': the rows of its Store set, partial words strobed.
static void tessera_snap_store_B(hls::burst_maxi<tessera::wide_t<16, float>> B, hls::stream<tessera::wide_t<16, float>> &B_out) {
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_n0 = 1998L - tdf_L0;
  if (tdf_n0 <= 0) return;
  const long tdf_rows = 1L;
  int tdf_pending = 0;
  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {
    tessera_df_write_row<16, 64, 8, float>(B, (long)(tdf_L0), tdf_n0, B_out, tdf_pending);
  }
  tessera_df_write_drain(B, tdf_pending);
}

extern "C" void tessera_snap(hls::burst_maxi<tessera::wide_t<16, float>> A, hls::burst_maxi<tessera::wide_t<16, float>> B) {
#pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=m_axi port=B offset=slave bundle=gmem1 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=s_axilite port=return
#pragma HLS DATAFLOW
  hls::stream<tessera::wide_t<16, float>, 64> A_in("A_in");
#pragma HLS STREAM variable=A_in depth=64
  hls::stream<tessera::wide_t<16, float>, 64> B_out("B_out");
#pragma HLS STREAM variable=B_out depth=64
#ifdef TESSERA_HLS_VITIS
  tessera_snap_load_A(A, A_in);
  tessera_snap_compute(A_in, B_out);
  tessera_snap_store_B(B, B_out);
#else
  // Emulation: the processes as coroutines, each stream bounded by its depth.
  tessera::emu::dataflow tdf_region("tessera_snap");
  tdf_region.process("load_A", [&] { tessera_snap_load_A(A, A_in); });
  tdf_region.process("compute", [&] { tessera_snap_compute(A_in, B_out); });
  tdf_region.process("store_B", [&] { tessera_snap_store_B(B, B_out); });
  tdf_region.run();
#endif
}
