// Tessera kernel tessera_snap
// Region: bench/stencils/2D-fdtd0.c:37:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: dataflow — load, compute and store processes under #pragma HLS DATAFLOW,
// connected by streams of 16-element words: every input element read from DDR once
// (whole rows of its Load box), the reuse window in on-chip buffers, 16 outputs per
// cycle, rows written back in strobed bursts. Every implicit conversion of the source is
// an explicit cast and each lane evaluates the source's expression, so results match the
// host bit for bit.

#include "tessera_wide.h"
#include "tessera_dataflow.h"

// Load process of 'ey': the rows of its Load box in row order, each element read once.
// Interleaved: segment k of 64 words through ey_b{k % 2}.
static void tessera_snap_load_ey(hls::burst_maxi<tessera::wide_t<16, float>> ey_b0, hls::burst_maxi<tessera::wide_t<16, float>> ey_b1, hls::stream<tessera::wide_t<16, float>> &ey_in) {
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_L1 = 0L;
  (void)tdf_L1;
  const long tdf_n0 = 37L - tdf_L0;
  if (tdf_n0 <= 0) return;
  const long tdf_rows = (tdf_n0 + 0) * 1;
  const long tdf_n = 53L;
  tessera_df_request_first2<16, 64>(ey_b0, ey_b1, (long)(tdf_L0 + 0L) * (long)(53L) + (tdf_L1), tdf_n);
  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {
    const bool tdf_next = tdf_r + 1 < tdf_rows;
    tessera_df_read_row2<16, 64, float>(ey_b0, ey_b1, (long)(tdf_L0 + tdf_r) * (long)(53L) + (tdf_L1), tdf_n, ey_in, tdf_next ? (long)(tdf_L0 + tdf_r + 1) * (long)(53L) + (tdf_L1) : 0L, tdf_next ? tdf_n : 0L);
  }
}

// Load process of 'hz': the rows of its Load box in row order, each element read once.
// Interleaved: segment k of 64 words through hz_b{k % 2}.
static void tessera_snap_load_hz(hls::burst_maxi<tessera::wide_t<16, float>> hz_b0, hls::burst_maxi<tessera::wide_t<16, float>> hz_b1, hls::stream<tessera::wide_t<16, float>> &hz_in) {
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_L1 = 0L;
  (void)tdf_L1;
  const long tdf_n0 = 37L - tdf_L0;
  if (tdf_n0 <= 0) return;
  const long tdf_rows = (tdf_n0 + 1) * 1;
  const long tdf_n = 53L;
  tessera_df_request_first2<16, 64>(hz_b0, hz_b1, (long)(tdf_L0 - 1 + 0L) * (long)(53L) + (tdf_L1), tdf_n);
  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {
    const bool tdf_next = tdf_r + 1 < tdf_rows;
    tessera_df_read_row2<16, 64, float>(hz_b0, hz_b1, (long)(tdf_L0 - 1 + tdf_r) * (long)(53L) + (tdf_L1), tdf_n, hz_in, tdf_next ? (long)(tdf_L0 - 1 + tdf_r + 1) * (long)(53L) + (tdf_L1) : 0L, tdf_next ? tdf_n : 0L);
  }
}

// Compute process: the reuse window in on-chip buffers, 16 lanes per cycle.
static void tessera_snap_compute(hls::stream<tessera::wide_t<16, float>> &ey_in, hls::stream<tessera::wide_t<16, float>> &hz_in, hls::stream<tessera::wide_t<16, float>> &ey_out) {
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_L1 = 0L;
  (void)tdf_L1;
  const long tdf_n0 = 37L - tdf_L0;
  if (tdf_n0 <= 0) return;
  // 'ey': 2 slots (the 1 rows the stencil spans and one being loaded), 4 words per row.
  TESSERA_PROCESS_STATE tessera::wide_t<16, float> ey_lb[2][4];
#pragma HLS ARRAY_PARTITION variable=ey_lb dim=1 complete
#pragma HLS BIND_STORAGE variable=ey_lb type=ram_2p impl=bram
  // 'hz': 3 slots (the 2 rows the stencil spans and one being loaded), 4 words per row.
  TESSERA_PROCESS_STATE tessera::wide_t<16, float> hz_lb[3][4];
#pragma HLS ARRAY_PARTITION variable=hz_lb dim=1 complete
#pragma HLS BIND_STORAGE variable=hz_lb type=ram_2p impl=bram
  // Fill: the first rows of every window.
  for (int tdf_r = 0; tdf_r < 1; tdf_r++) {
    for (int tdf_q = 0; tdf_q < 4; tdf_q++) {
#pragma HLS PIPELINE II=1
      ey_lb[tdf_r][tdf_q] = ey_in.read();
    }
  }
  int ey_head = 0;  // the slot of the window's first row
  for (int tdf_r = 0; tdf_r < 2; tdf_r++) {
    for (int tdf_q = 0; tdf_q < 4; tdf_q++) {
#pragma HLS PIPELINE II=1
      hz_lb[tdf_r][tdf_q] = hz_in.read();
    }
  }
  int hz_head = 0;  // the slot of the window's first row
  for (long tdf_i = 0; tdf_i < tdf_n0; tdf_i++) {
    const bool tdf_more = tdf_i + 1 < tdf_n0;  // a next row to load
    const int ey_k0 = ey_head + 0 >= 2 ? ey_head + 0 - 2 : ey_head + 0;
    (void)ey_k0;
    const int ey_k1 = ey_head + 1 >= 2 ? ey_head + 1 - 2 : ey_head + 1;
    (void)ey_k1;
    int ey_r = 0, ey_q = 0;  // next row / word to load into slot ey_k1
    const int hz_k0 = hz_head + 0 >= 3 ? hz_head + 0 - 3 : hz_head + 0;
    (void)hz_k0;
    const int hz_k1 = hz_head + 1 >= 3 ? hz_head + 1 - 3 : hz_head + 1;
    (void)hz_k1;
    const int hz_k2 = hz_head + 2 >= 3 ? hz_head + 2 - 3 : hz_head + 2;
    (void)hz_k2;
    int hz_r = 0, hz_q = 0;  // next row / word to load into slot hz_k2
    int tdf_oj = 0, tdf_ow = 0;  // next output row / word
    const int tdf_steps = tdf_more ? 4 : 4;
    for (int tdf_t = 0; tdf_t < tdf_steps; tdf_t++) {
#pragma HLS PIPELINE II=1
      if (tdf_more && tdf_t < 4) {
        ey_lb[ey_k1][ey_q] = ey_in.read();
        ey_q++;
        (void)ey_r;
      }
      if (tdf_more && tdf_t < 4) {
        hz_lb[hz_k2][hz_q] = hz_in.read();
        hz_q++;
        (void)hz_r;
      }
      if (tdf_t < 4) {
        tessera::wide_t<16, float> ey_o = 0;
#ifndef TESSERA_HLS_VITIS
        if ((tdf_ow + 1) * 16 <= 53) {
          const tessera::wide_t<16, float> *ey_w0 = &ey_lb[ey_k0][tdf_ow];
          const tessera::wide_t<16, float> *hz_w0 = &hz_lb[hz_k0][tdf_ow];
          const tessera::wide_t<16, float> *hz_w1 = &hz_lb[hz_k1][tdf_ow];
          for (int tdf_l = 0; tdf_l < 16; tdf_l++) {
            const long tdf_j = tdf_ow * 16 + tdf_l;
            const int i = (int)(tdf_L0 + tdf_i);
            (void)i;
            const int j = (int)(tdf_L1 + tdf_j);
            (void)j;
            tessera::set_lane<float>(ey_o, tdf_l, static_cast<float>((float)((double)tessera::window_lane<float>(ey_w0, tdf_l) - 0.5 * (double)(tessera::window_lane<float>(hz_w1, tdf_l) - tessera::window_lane<float>(hz_w0, tdf_l)))));
          }
        } else
#endif
        {
        tessera::wide_t<16, float> ey_w0[1];
        for (int tdf_d = 0; tdf_d < 1; tdf_d++) {
#pragma HLS UNROLL
          const int tdf_q = tdf_ow + tdf_d;
          ey_w0[tdf_d] = tdf_q < 4 ? ey_lb[ey_k0][tdf_q] : tessera::wide_t<16, float>(0);
        }
        tessera::wide_t<16, float> hz_w0[1];
        for (int tdf_d = 0; tdf_d < 1; tdf_d++) {
#pragma HLS UNROLL
          const int tdf_q = tdf_ow + tdf_d;
          hz_w0[tdf_d] = tdf_q < 4 ? hz_lb[hz_k0][tdf_q] : tessera::wide_t<16, float>(0);
        }
        tessera::wide_t<16, float> hz_w1[1];
        for (int tdf_d = 0; tdf_d < 1; tdf_d++) {
#pragma HLS UNROLL
          const int tdf_q = tdf_ow + tdf_d;
          hz_w1[tdf_d] = tdf_q < 4 ? hz_lb[hz_k1][tdf_q] : tessera::wide_t<16, float>(0);
        }
        for (int tdf_l = 0; tdf_l < 16; tdf_l++) {
#pragma HLS UNROLL
          const long tdf_j = tdf_ow * 16 + tdf_l;
          if (tdf_j < 53) {
            const int i = (int)(tdf_L0 + tdf_i);
            (void)i;
            const int j = (int)(tdf_L1 + tdf_j);
            (void)j;
            tessera::set_lane<float>(ey_o, tdf_l, static_cast<float>((float)((double)tessera::window_lane<float>(ey_w0, tdf_l) - 0.5 * (double)(tessera::window_lane<float>(hz_w1, tdf_l) - tessera::window_lane<float>(hz_w0, tdf_l)))));
          }
        }
        }
        ey_out.write(ey_o);
        tdf_ow++;
        (void)tdf_oj;
      }
    }
    ey_head = ey_head + 1 == 2 ? 0 : ey_head + 1;
    hz_head = hz_head + 1 == 3 ? 0 : hz_head + 1;
  }
}

// Store process of 'ey': the rows of its Store set, partial words strobed.
// Interleaved: segment k of 64 words through ey_b{k % 2}.
static void tessera_snap_store_ey(hls::burst_maxi<tessera::wide_t<16, float>> ey_b0, hls::burst_maxi<tessera::wide_t<16, float>> ey_b1, hls::stream<tessera::wide_t<16, float>> &ey_out) {
  const long tdf_L0 = 1L;
  (void)tdf_L0;
  const long tdf_L1 = 0L;
  (void)tdf_L1;
  const long tdf_n0 = 37L - tdf_L0;
  if (tdf_n0 <= 0) return;
  const long tdf_rows = tdf_n0 * 1;
  int tdf_pending0 = 0, tdf_pending1 = 0;
  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {
    tessera_df_write_row2<16, 64, 8, float>(ey_b0, ey_b1, (long)(tdf_L0 + tdf_r) * (long)(53L) + (tdf_L1), 53L, ey_out, tdf_pending0, tdf_pending1);
  }
  tessera_df_write_drain(ey_b0, tdf_pending0);
  tessera_df_write_drain(ey_b1, tdf_pending1);
}

extern "C" void tessera_snap(hls::burst_maxi<tessera::wide_t<16, float>> hz, hls::burst_maxi<tessera::wide_t<16, float>> ey, hls::burst_maxi<tessera::wide_t<16, float>> tdf_w_ey, hls::burst_maxi<tessera::wide_t<16, float>> tdf_b1_hz, hls::burst_maxi<tessera::wide_t<16, float>> tdf_b1_ey, hls::burst_maxi<tessera::wide_t<16, float>> tdf_w_b1_ey) {
#pragma HLS INTERFACE mode=m_axi port=hz offset=slave bundle=gmem0 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=m_axi port=ey offset=slave bundle=gmem1 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=m_axi port=tdf_w_ey offset=slave bundle=gmem2 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=m_axi port=tdf_b1_hz offset=slave bundle=gmem3 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=m_axi port=tdf_b1_ey offset=slave bundle=gmem4 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=m_axi port=tdf_w_b1_ey offset=slave bundle=gmem5 max_read_burst_length=64 max_write_burst_length=64 num_read_outstanding=16 num_write_outstanding=16
#pragma HLS INTERFACE mode=s_axilite port=return
#pragma HLS DATAFLOW
  hls::stream<tessera::wide_t<16, float>, 64> ey_in("ey_in");
#pragma HLS STREAM variable=ey_in depth=64
  hls::stream<tessera::wide_t<16, float>, 64> hz_in("hz_in");
#pragma HLS STREAM variable=hz_in depth=64
  hls::stream<tessera::wide_t<16, float>, 64> ey_out("ey_out");
#pragma HLS STREAM variable=ey_out depth=64
#ifdef TESSERA_HLS_VITIS
  tessera_snap_load_ey(ey, tdf_b1_ey, ey_in);
  tessera_snap_load_hz(hz, tdf_b1_hz, hz_in);
  tessera_snap_compute(ey_in, hz_in, ey_out);
  tessera_snap_store_ey(tdf_w_ey, tdf_w_b1_ey, ey_out);
#else
  // Emulation: the processes as coroutines, each stream bounded by its depth.
  tessera::emu::dataflow tdf_region("tessera_snap");
  tdf_region.process("load_ey", [&] { tessera_snap_load_ey(ey, tdf_b1_ey, ey_in); });
  tdf_region.process("load_hz", [&] { tessera_snap_load_hz(hz, tdf_b1_hz, hz_in); });
  tdf_region.process("compute", [&] { tessera_snap_compute(ey_in, hz_in, ey_out); });
  tdf_region.process("store_ey", [&] { tessera_snap_store_ey(tdf_w_ey, tdf_w_b1_ey, ey_out); });
  tdf_region.run();
#endif
}
