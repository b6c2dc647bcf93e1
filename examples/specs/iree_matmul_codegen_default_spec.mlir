// Source: iree-org/iree, tests/transform_dialect/cpu/matmul_codegen_default_spec.mlir (commit
// 1ae71b36458808444c4da455081d8974bf545368, Apache-2.0 WITH LLVM-exception): the @codegen
// lowering sequence of IREE's CPU transform-dialect test, a codegen library.
// Changes for IREE 3.13, the two a user makes: a @__kernel_config entry (a foreach_match pair
// that points the matmul's dispatch at @codegen with translation_info's codegen_spec), and
// @codegen annotating the function with #iree_codegen.no_pipeline (without it IREE 3.13 runs
// its default CPU pipeline again after the sequence). The sequence itself is verbatim.
module attributes { transform.with_named_sequence } {
  transform.named_sequence @codegen(
      %variant_op: !transform.any_op {transform.consumed}) {
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %variant_op : (!transform.any_op) -> !transform.any_op

    // Step 1. Tile to forall with tile_sizes [2].
    // ===================================================
    %tiled_generic, %forall =
      transform.structured.tile_using_forall %matmul tile_sizes [2]
        ( mapping = [#gpu.block<x>] ) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.iree.populate_workgroup_count_region_using_num_threads_slice %forall
      : (!transform.any_op) -> ()

    // Step 2. Bufferize and drop HAL decriptor from memref ops.
    // =========================================================
    transform.iree.eliminate_empty_tensors %variant_op : (!transform.any_op) -> ()
    %variant_op_3 = transform.iree.bufferize %variant_op : (!transform.any_op) -> !transform.any_op

    // Step 3. Post-bufferization mapping workgroup.
    // =========================================================
    %memref_func = transform.structured.match ops{["func.func"]} in %variant_op_3 : (!transform.any_op) -> !transform.any_op
    transform.iree.forall_to_workgroup %memref_func : (!transform.any_op) -> ()
    // Added for IREE 3.13: no default pipeline after the sequence.
    %no_pipeline = transform.param.constant #iree_codegen.translation_info<pipeline = #iree_codegen.no_pipeline> -> !transform.any_param
    transform.annotate %memref_func "translation_info" = %no_pipeline : !transform.any_op, !transform.any_param
    transform.yield
  }

  // Added for IREE 3.13: the entry point that selects @codegen for a matmul's dispatch.
  transform.named_sequence @match_matmul(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.matmul"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @use_codegen(%op: !transform.any_op {transform.readonly}) {
    %func = transform.get_parent_op %op <{op_name = "func.func"}> : (!transform.any_op) -> !transform.any_op
    %translation = transform.param.constant #iree_codegen.translation_info<pipeline = #iree_codegen.transform_dialect_codegen codegen_spec = @codegen> -> !transform.any_param
    transform.annotate %func "translation_info" = %translation : !transform.any_op, !transform.any_param
    transform.yield
  }
  transform.named_sequence @__kernel_config(%variant_op: !transform.any_op {transform.consumed}) -> !transform.any_op {
    %res = transform.foreach_match in %variant_op @match_matmul -> @use_codegen : (!transform.any_op) -> !transform.any_op
    transform.yield %res : !transform.any_op
  }
}
