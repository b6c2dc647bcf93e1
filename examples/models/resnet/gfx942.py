"""Strategies for resnet_gfx942, emitted by `tdsl ops --emit`; edit freely."""

from tdsl import AmdGpuTarget, ContractionMatch, ConvolutionMatch, GpuLowering, Rule, StrategySet

strategies = StrategySet(
    name="resnet_gfx942",
    targets=[AmdGpuTarget()],
    rules=[
        # main_graph$async_dispatch_1_conv_32x32x32x3x3x3_f32 (x1): linalg.generic [foocww] 3x66x66xf32, 32x3x3x3xf32 -> 32x32x32xf32
        Rule(target="gfx942", match=ConvolutionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], output_image=[32, 32], output_channel=[32], filter=[3, 3], input_channel=[3], depth=[], strides=[2, 2], dilations=[1, 1]),
             strategy=GpuLowering(name="d1_generic", workgroup=[32, 1, 32, 0], reduction=[0, 0, 0, 7], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], padding=[32, 1, 32, 28], workgroup_size=[256, 1, 1], prefetch_num_stages=0, use_igemm_convolution=True)),
        # main_graph$async_dispatch_3_conv_32x32x32x32x3x3_f32 (x1): linalg.generic [foocww] 32x34x34xf32, 32x32x3x3xf32 -> 32x32x32xf32; also main_graph$async_dispatch_4_conv_32x32x32x32x3x3_f32 (x1)
        Rule(target="gfx942", match=ConvolutionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], output_image=[32, 32], output_channel=[32], filter=[3, 3], input_channel=[32], depth=[], strides=[1, 1], dilations=[1, 1]),
             strategy=GpuLowering(name="d3_generic", workgroup=[32, 1, 32, 0], reduction=[0, 0, 0, 24], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2, use_igemm_convolution=True)),
        # main_graph$async_dispatch_6_conv_64x16x16x32x3x3_f32 (x1): linalg.generic [foocww] 32x34x34xf32, 64x32x3x3xf32 -> 64x16x16xf32
        Rule(target="gfx942", match=ConvolutionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], output_image=[16, 16], output_channel=[64], filter=[3, 3], input_channel=[32], depth=[], strides=[2, 2], dilations=[1, 1]),
             strategy=GpuLowering(name="d5_generic", workgroup=[32, 2, 16, 0], reduction=[0, 0, 0, 24], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2, use_igemm_convolution=True)),
        # main_graph$async_dispatch_7_matmul_like_64x16x16x32_f32 (x1): linalg.generic [nmmk] 32x16x16xf32, 64x32xf32 -> 64x16x16xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", loop_order="nmmk", batch=[], m=[16, 16], n=[64], k=[32]),
             strategy=GpuLowering(name="d6_generic", workgroup=[32, 2, 16, 0], reduction=[0, 0, 0, 8], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=0)),
        # main_graph$async_dispatch_8_conv_64x16x16x64x3x3_f32 (x1): linalg.generic [foocww] 64x18x18xf32, 64x64x3x3xf32 -> 64x16x16xf32
        Rule(target="gfx942", match=ConvolutionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], output_image=[16, 16], output_channel=[64], filter=[3, 3], input_channel=[64], depth=[], strides=[1, 1], dilations=[1, 1]),
             strategy=GpuLowering(name="d7_generic", workgroup=[32, 2, 16, 0], reduction=[0, 0, 0, 36], subgroup=[1, 1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=2, use_igemm_convolution=True)),
        # main_graph$async_dispatch_9_matmul_like_128x256x64_f32 (x1): linalg.generic [nmk] 64x256xf32, 128x64xf32 -> 128x256xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", loop_order="nmk", batch=[], m=[256], n=[128], k=[64]),
             strategy=GpuLowering(name="d8_generic", workgroup=[32, 32, 0], reduction=[0, 0, 16], subgroup=[1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], workgroup_size=[256, 1, 1], prefetch_num_stages=0)),
        # main_graph$async_dispatch_11_matmul_1x10x128_f32 (x1): linalg.generic [mnk] 1x128xf32, 10x128xf32 -> 1x10xf32
        Rule(target="gfx942", match=ContractionMatch(lhs_type="f32", rhs_type="f32", output_type="f32", batch=[], m=[1], n=[10], k=[128]),
             strategy=GpuLowering(name="d10_generic", workgroup=[16, 16, 0], reduction=[0, 0, 32], subgroup=[1, 1, 0], mma_kind="MFMA_F32_16x16x4_F32", promote_operands=[0, 1], padding=[16, 16, 128], workgroup_size=[64, 1, 1], prefetch_num_stages=0)),
    ],
)
# not covered: main_graph$async_dispatch_0_slow_memcpy (x1): linalg.generic [...] 3x64x64xf32 -> 3x64x64xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_2_slow_memcpy (x2): linalg.generic [...] 32x32x32xf32 -> 32x32x32xf32: not a contraction or convolution
# not covered: main_graph$async_dispatch_10_reduction_128x256_f32 (x1): linalg.generic [..] 128x256xf32, 128xf32 -> 128xf32: not a contraction or convolution
