"""Strategies for bert_gfx942, emitted by `tdsl ops --emit`; edit freely."""

from tdsl import AmdGpuTarget, ContractionMatch, GpuLowering, Rule, StrategySet

strategies = StrategySet(
    name="bert_gfx942",
    targets=[AmdGpuTarget()],
    rules=[
        # main_graph$async_dispatch_5_batch_matmul_1x64x256x256_f32 (x6): linalg.generic [bmnk] 1x64x256xf32, 1x256x256xf32 -> 1x64x256xf32; also main_graph$async_dispatch_14_batch_matmul_1x64x256x256_f32 (x2)
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[64], n=[256], k=[256]),
             strategy=GpuLowering(name="d5_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 16], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
        # main_graph$async_dispatch_11_batch_matmul_4x64x64x64_f32 (x2): linalg.generic [bmnk] 4x64x64xf32, 4x64x64xf32 -> 4x64x64xf32; also main_graph$async_dispatch_13_batch_matmul_4x64x64x64_f32 (x2)
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[4], m=[64], n=[64], k=[64]),
             strategy=GpuLowering(name="d8_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 16], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=0)),
        # main_graph$async_dispatch_17_batch_matmul_1x64x1024x256_f32 (x2): linalg.generic [bmnk] 1x64x256xf32, 1x256x1024xf32 -> 1x64x1024xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[64], n=[1024], k=[256]),
             strategy=GpuLowering(name="d12_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 16], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
        # main_graph$async_dispatch_18_batch_matmul_1x64x256x1024_f32 (x2): linalg.generic [bmnk] 1x64x1024xf32, 1x1024x256xf32 -> 1x64x256xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[1], m=[64], n=[256], k=[1024]),
             strategy=GpuLowering(name="d13_generic", workgroup=[1, 32, 32, 0], reduction=[0, 0, 0, 32], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
        # main_graph$async_dispatch_38_matmul_1x256x256_f32 (x1): linalg.generic [mnk] 1x256xf32, 256x256xf32 -> 1x256xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=[1], n=[256], k=[256]),
             strategy=GpuLowering(name="d15_generic", workgroup=[16, 64, 0], reduction=[0, 0, 16], subgroup=[1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], padding=[16, 64, 64], workgroup_size=[256, 1, 1], prefetch_num_stages=2)),
    ],
)
# not covered: main_graph$async_dispatch_0_elementwise_64x256_i64xi64xf32xf32 (x1): linalg.generic [..] 64xi64, 64xi64, 64x256xf32 -> 64x256xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_1_reduction_64x256_f32 (x5): linalg.generic [..] 64x256xf32 -> 64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_2_reduction_64x256_f32 (x5): linalg.generic [..] 64x256xf32 -> 64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_3_elementwise_64_i64xi1 (x1): linalg.generic [.] 64xi64 -> 64xi8: not a contraction or convolution
# not covered: main_graph$async_dispatch_4_elementwise_broadcast_64x64_i64xf32 (x1): linalg.generic [..] 64xi64 -> 64x64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_6_elementwise_transpose_64x4x64_f32 (x4): linalg.generic [...] 64x4x64xf32 -> 4x64x64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_10_elementwise_transpose_64x256_f32 (x2): linalg.generic [..] 64x256xf32 -> 256x64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_12_softmax_4x64x64xf32_dispatch_tensor_store (x2): linalg.generic [...] 4x64x64xf32 -> 4x64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_37_elementwise_broadcast_256_f32 (x1): linalg.generic [.]  -> 256xf32: not a contraction or convolution
