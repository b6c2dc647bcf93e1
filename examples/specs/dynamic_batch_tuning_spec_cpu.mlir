// Written for tdsl's tests (issue 38) in the style of IREE's tuning specs (the example of
// IREE's tuning documentation, docs/website/docs/reference/tuning.md): the matmul of a
// dynamic-batch model (?x1280 f32 activations times 1280x1024 f32 weights, the dispatch
// matmul_Dx1024x1280), its M matched with dims_equal [-1] (-1: dynamic), configured for
// llvm-cpu.
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {iree_codegen.tuning_spec_with_default_entrypoint, transform.with_named_sequence} {
  transform.named_sequence @apply_op_config(%arg0: !transform.any_op {transform.readonly}, %arg1: !transform.any_param {transform.readonly}) {
    transform.annotate %arg0 "compilation_info" = %arg1 : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @match_matmul_Dx1024x1280_f32(%arg0: !transform.any_op {transform.readonly}) -> (!transform.any_op, !transform.any_param) {
    %batch, %m, %n, %k = transform.iree.match.contraction %arg0, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [#map, #map1, #map2] : !transform.any_op -> !transform.param<i64>
    transform.iree.match.dims_equal %batch, [] : !transform.param<i64>
    transform.iree.match.dims_equal %m, [-1] : !transform.param<i64>
    transform.iree.match.dims_equal %n, [1024] : !transform.param<i64>
    transform.iree.match.dims_equal %k, [1280] : !transform.param<i64>
    %config = transform.param.constant #iree_codegen.compilation_info<
      lowering_config = #iree_cpu.lowering_config<distribution = [32, 64, 0], vector_common_parallel = [8, 32, 0], vector_reduction = [0, 0, 1]>,
      translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
    > -> !transform.any_param
    transform.yield %arg0, %config : !transform.any_op, !transform.any_param
  }
  transform.named_sequence @__kernel_config(%arg0: !transform.any_op {transform.consumed}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    %updated_root = transform.foreach_match in %arg0
        @match_matmul_Dx1024x1280_f32 -> @apply_op_config : (!transform.any_op) -> !transform.any_op
    transform.yield %updated_root : !transform.any_op
  }
}
