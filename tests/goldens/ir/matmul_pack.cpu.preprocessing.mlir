module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "...", cpu_features = "...", data_layout = "...", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = ..., target_triple = "...", ukernels = "none"}>]> : !hal.device
  util.func public @matmul(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @matmul(%input0: tensor<256x512xf32>, %input1: tensor<512x384xf32>) -> (%output0: tensor<256x384xf32>)"}} {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<256x512xf32>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<512x384xf32>
    %2 = tensor.empty() : tensor<256x384xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<256x384xf32>) -> tensor<256x384xf32>
    %4 = tensor.empty() : tensor<32x512x8x1xf32>
    %pack = linalg.pack %0 inner_dims_pos = [0, 1] inner_tiles = [8, 1] into %4 : tensor<256x512xf32> -> tensor<32x512x8x1xf32>
    %5 = tensor.empty() : tensor<512x12x32x1xf32>
    %6 = tensor.empty() : tensor<12x512x32x1xf32>
    %pack_0 = linalg.pack %1 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [32, 1] into %6 : tensor<512x384xf32> -> tensor<12x512x32x1xf32>
    %7 = tensor.empty() : tensor<32x12x8x32xf32>
    %pack_1 = linalg.pack %3 inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %7 : tensor<256x384xf32> -> tensor<32x12x8x32xf32>
    %8 = linalg.mmt4d {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)>], tdsl.layout = "mmt4d_8x32x1", tdsl.layout_rule = 0 : i64} ins(%pack, %pack_0 : tensor<32x512x8x1xf32>, tensor<12x512x32x1xf32>) outs(%pack_1 : tensor<32x12x8x32xf32>) -> tensor<32x12x8x32xf32>
    %unpack = linalg.unpack %8 inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %3 : tensor<32x12x8x32xf32> -> tensor<256x384xf32>
    %9 = hal.tensor.export %unpack "output0" : tensor<256x384xf32> -> !hal.buffer_view
    util.return %9 : !hal.buffer_view
  }
}
