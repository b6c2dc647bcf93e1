// Source: IREE's default gfx942 tuning spec as iree-base-compiler 3.13.0 ships it, dumped with
//   iree-compile examples/conv1x1_gpu/payload.mlir --iree-hal-target-device=hip --iree-rocm-target=gfx942 \
//     --iree-codegen-enable-default-tuning-specs --iree-codegen-dump-tuning-specs-to=DIR
// (compiler/plugins/target/ROCM/builtins/tuning/iree_default_tuning_spec_gfx942.mlir in iree-org/iree, Apache-2.0 WITH LLVM-exception).
#map = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5)>
#map3 = affine_map<(d0, d1, d2, d3, d4, d5) -> ()>
#map4 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>
#map6 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map7 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map8 = affine_map<(d0, d1, d2) -> (d0, d1)>
#translation = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> workgroup_size = [256] subgroup_size = 64, {llvm_func_attrs = {"amdgpu-waves-per-eu" = "2", "denormal-fp-math-f32" = "preserve-sign"}}>
#translation1 = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> workgroup_size = [256, 1, 1] subgroup_size = 64, {gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = 2>}>
#compilation = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [1, 2], reduction = [0, 0, 0, 0, 0, 64], workgroup = [1, 1, 128, 0, 0, 0]}>, translation_info = #translation>
#compilation1 = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<MFMA_F32_16x16x16_F16>, promote_operands = [0, 1], reduction = [0, 0, 64], subgroup_basis = [[2, 2, 1], [0, 1, 2]], workgroup = [64, 128, 0]}>, translation_info = #translation1>
module @iree_default_tuning_spec_gfx942 attributes {iree_codegen.tuning_spec_with_default_entrypoint, transform.with_named_sequence} {
  transform.named_sequence @apply_op_config(%arg0: !transform.any_op {transform.readonly}, %arg1: !transform.any_param {transform.readonly}) {
    transform.annotate %arg0 "compilation_info" = %arg1 : !transform.any_op, !transform.any_param
    transform.annotate %arg0 "__tuning_spec_applied__" : !transform.any_op
    transform.yield 
  }
  transform.named_sequence @apply_attn_op_config(%arg0: !transform.any_op {transform.readonly}, %arg1: !transform.any_param {transform.readonly}, %arg2: !transform.any_param {transform.readonly}) {
    transform.annotate %arg0 "compilation_info" = %arg1 : !transform.any_op, !transform.any_param
    transform.annotate %arg0 "decomposition_config" = %arg2 : !transform.any_op, !transform.any_param
    transform.annotate %arg0 "__tuning_spec_applied__" : !transform.any_op
    transform.yield 
  }
  transform.named_sequence @match_attention_2x10x4096x64x64x64_f16(%arg0: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param, !transform.any_param) {
    transform.iree.match.has_no_lowering_config %arg0 : !transform.any_op
    %batch_dims, %m_dims, %n_dims, %k1_dims, %k2_dims = transform.iree.match.online_attention %arg0, query_type = f16, key_type = f16, value_type = f16, scale_type = f16, output_type = f32, max_type = f32, sum_type = f32, indexing_maps = [#map, #map1, #map2, #map3, #map4, #map5, #map5] : !transform.any_op -> !transform.param<i64>
    %0 = transform.get_operand %arg0[0] : (!transform.any_op) -> !transform.any_value
    %1 = transform.get_operand %arg0[1] : (!transform.any_op) -> !transform.any_value
    %2 = transform.get_operand %arg0[2] : (!transform.any_op) -> !transform.any_value
    transform.iree.match.cast_compatible_type %0 = tensor<?x?x?x?xf16> : !transform.any_value
    transform.iree.match.dim_is_multiple_of %0[2], 128 : !transform.any_value
    transform.iree.match.dim_is_multiple_of %0[3], 16 : !transform.any_value
    transform.iree.match.cast_compatible_type %1 = tensor<?x?x64x64xf16> : !transform.any_value
    transform.iree.match.dim_is_multiple_of %1[2], 64 : !transform.any_value
    transform.iree.match.dim_is_multiple_of %1[3], 16 : !transform.any_value
    transform.iree.match.cast_compatible_type %2 = tensor<?x?x64x64xf16> : !transform.any_value
    transform.iree.match.dim_is_multiple_of %2[2], 16 : !transform.any_value
    transform.iree.match.dim_is_multiple_of %2[3], 64 : !transform.any_value
    %3 = transform.param.constant #compilation -> !transform.any_param
    %4 = transform.param.constant {pv_attrs = {lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.mma_layout<MFMA_F32_32x32x8_F16, col_major = true>, promote_operands = [1], subgroup_basis = [[1, 1, 4, 1, 1, 1], [0, 1, 2, 3, 5]]}>}, qk_attrs = {lowering_config = #iree_gpu.lowering_config<{mma_kind = #iree_gpu.virtual_mma_layout<VMFMA_F32_32x32x16_F16, col_major = true>, promote_operands = [1], subgroup_basis = [[1, 1, 4, 1, 1, 1], [0, 1, 2, 4, 5]]}>}} -> !transform.any_param
    transform.yield %arg0, %3, %4 : !transform.any_op, !transform.any_param, !transform.any_param
  }
  transform.named_sequence @match_mmt_2048x1280x5120_f16_f16_f32(%arg0: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    transform.iree.match.has_no_lowering_config %arg0 : !transform.any_op
    %batch_dims, %m_dims, %n_dims, %k_dims = transform.iree.match.contraction %arg0, lhs_type = f16, rhs_type = f16, output_type = f32, indexing_maps = [#map6, #map7, #map8] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %m_dims, [2048] : !transform.param<i64>
    transform.iree.match.dims_equal %n_dims, [1280] : !transform.param<i64>
    transform.iree.match.dims_equal %k_dims, [5120] : !transform.param<i64>
    %0 = transform.param.constant #compilation1 -> !transform.any_param
    transform.yield %arg0, %0 : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @__kernel_config(%arg0: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %updated_root = transform.foreach_match in %arg0 
        @match_attention_2x10x4096x64x64x64_f16 -> @apply_attn_op_config, 
        @match_mmt_2048x1280x5120_f16_f16_f32 -> @apply_op_config : (!transform.any_op) -> !transform.any_op
    transform.yield %updated_root : !transform.any_op
  }
}
