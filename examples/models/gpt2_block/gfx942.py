"""Strategies for gpt2_block_gfx942, emitted by `tdsl ops --emit`; edit freely."""

from tdsl import AmdGpuTarget, ContractionMatch, GpuLowering, Rule, StrategySet

strategies = StrategySet(
    name="gpt2_block_gfx942",
    targets=[AmdGpuTarget()],
    rules=[
        # main_graph$async_dispatch_3_batch_matmul_1x64x768x256_f32 (x1): linalg.generic [bmnk] 1x64x256xf32, 1x256x768xf32 -> 1x64x768xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[64], n=[768], k=[256]),
             strategy=GpuLowering(name="d3_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 16], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
        # main_graph$async_dispatch_10_batch_matmul_4x64x64x64_f32 (x1): linalg.generic [bmnk] 4x64x64xf32, 4x64x64xf32 -> 4x64x64xf32; also main_graph$async_dispatch_12_batch_matmul_4x64x64x64_f32 (x1)
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[4], m=[64], n=[64], k=[64]),
             strategy=GpuLowering(name="d9_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 16], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=0)),
        # main_graph$async_dispatch_13_batch_matmul_1x64x256x256_f32 (x1): linalg.generic [bmnk] 1x64x256xf32, 1x256x256xf32 -> 1x64x256xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[64], n=[256], k=[256]),
             strategy=GpuLowering(name="d12_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 16], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
        # main_graph$async_dispatch_16_batch_matmul_1x64x1024x256_f32 (x1): linalg.generic [bmnk] 1x64x256xf32, 1x256x1024xf32 -> 1x64x1024xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[64], n=[1024], k=[256]),
             strategy=GpuLowering(name="d13_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 16], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
        # main_graph$async_dispatch_17_batch_matmul_1x64x256x1024_f32 (x1): linalg.generic [bmnk] 1x64x1024xf32, 1x1024x256xf32 -> 1x64x256xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[64], n=[256], k=[1024]),
             strategy=GpuLowering(name="d14_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 32], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
    ],
)
# not covered: main_graph$async_dispatch_0_elementwise_64x256_i64xf32xf32 (x1): linalg.generic [..] 64xi64, 64x256xf32 -> 64x256xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_1_reduction_64x256_f32 (x3): linalg.generic [..] 64x256xf32 -> 64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_2_reduction_64x256_f32 (x3): linalg.generic [..] 64x256xf32 -> 64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_4_slow_memcpy (x1): linalg.generic [..] 64x256xf32 -> 64x256xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_5_slow_memcpy (x1): linalg.generic [..] 64x256xf32 -> 64x256xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_6_slow_memcpy (x1): linalg.generic [..] 64x256xf32 -> 64x256xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_7_transpose_64x4x64_f32 (x2): linalg.generic [...] 64x4x64xf32 -> 4x64x64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_9_transpose_64x256_f32 (x1): linalg.generic [..] 64x256xf32 -> 256x64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_11_softmax_4x64x64xf32_dispatch_tensor_store (x1): linalg.generic [...] 4x64x64xf32 -> 4x64xf32: not a contraction or convolution
