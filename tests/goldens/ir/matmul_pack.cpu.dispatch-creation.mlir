module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "...", cpu_features = "...", data_layout = "...", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = ..., target_triple = "...", ukernels = "none"}>]> : !hal.device
  util.func public @matmul(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @matmul(%input0: tensor<256x512xf32>, %input1: tensor<512x384xf32>) -> (%output0: tensor<256x384xf32>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<256x512xf32>
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<512x384xf32>
    %2 = flow.dispatch.workgroups(%0) : (tensor<256x512xf32>) -> tensor<32x512x8x1xf32> =
        (%arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x512xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x512x8x1xf32>>) {
      %7 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0, 0], sizes = [256, 512], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x512xf32>> -> tensor<256x512xf32>
      %8 = tensor.empty() : tensor<32x512x8x1xf32>
      %pack = linalg.pack %7 inner_dims_pos = [0, 1] inner_tiles = [8, 1] into %8 : tensor<256x512xf32> -> tensor<32x512x8x1xf32>
      iree_tensor_ext.dispatch.tensor.store %pack, %arg3, offsets = [0, 0, 0, 0], sizes = [32, 512, 8, 1], strides = [1, 1, 1, 1] : tensor<32x512x8x1xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x512x8x1xf32>>
      flow.return
    } count() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    %3 = flow.dispatch.workgroups(%1) : (tensor<512x384xf32>) -> tensor<12x512x32x1xf32> =
        (%arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x384xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<12x512x32x1xf32>>) {
      %7 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0, 0], sizes = [512, 384], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x384xf32>> -> tensor<512x384xf32>
      %8 = tensor.empty() : tensor<12x512x32x1xf32>
      %pack = linalg.pack %7 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [32, 1] into %8 : tensor<512x384xf32> -> tensor<12x512x32x1xf32>
      iree_tensor_ext.dispatch.tensor.store %pack, %arg3, offsets = [0, 0, 0, 0], sizes = [12, 512, 32, 1], strides = [1, 1, 1, 1] : tensor<12x512x32x1xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<12x512x32x1xf32>>
      flow.return
    } count() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    %4 = flow.dispatch.workgroups(%2, %3) : (tensor<32x512x8x1xf32>, tensor<12x512x32x1xf32>) -> tensor<32x12x8x32xf32> =
        (%arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x512x8x1xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<readonly:tensor<12x512x32x1xf32>>, %arg4: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x12x8x32xf32>>) {
      %cst = arith.constant 0.000000e+00 : f32
      %7 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0, 0, 0, 0], sizes = [32, 512, 8, 1], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x512x8x1xf32>> -> tensor<32x512x8x1xf32>
      %8 = iree_tensor_ext.dispatch.tensor.load %arg3, offsets = [0, 0, 0, 0], sizes = [12, 512, 32, 1], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<12x512x32x1xf32>> -> tensor<12x512x32x1xf32>
      %9 = tensor.empty() : tensor<32x12x8x32xf32>
      %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<32x12x8x32xf32>) -> tensor<32x12x8x32xf32>
      %11 = linalg.mmt4d {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)>], tdsl.layout = "mmt4d_8x32x1", tdsl.layout_rule = 0 : i64} ins(%7, %8 : tensor<32x512x8x1xf32>, tensor<12x512x32x1xf32>) outs(%10 : tensor<32x12x8x32xf32>) -> tensor<32x12x8x32xf32>
      iree_tensor_ext.dispatch.tensor.store %11, %arg4, offsets = [0, 0, 0, 0], sizes = [32, 12, 8, 32], strides = [1, 1, 1, 1] : tensor<32x12x8x32xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x12x8x32xf32>>
      flow.return
    } count() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    %5 = flow.dispatch.workgroups(%4) : (tensor<32x12x8x32xf32>) -> tensor<256x384xf32> =
        (%arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x12x8x32xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x384xf32>>) {
      %7 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0, 0, 0, 0], sizes = [32, 12, 8, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x12x8x32xf32>> -> tensor<32x12x8x32xf32>
      %8 = tensor.empty() : tensor<256x384xf32>
      %unpack = linalg.unpack %7 inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %8 : tensor<32x12x8x32xf32> -> tensor<256x384xf32>
      iree_tensor_ext.dispatch.tensor.store %unpack, %arg3, offsets = [0, 0], sizes = [256, 384], strides = [1, 1] : tensor<256x384xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x384xf32>>
      flow.return
    } count() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    %6 = hal.tensor.export %5 "output0" : tensor<256x384xf32> -> !hal.buffer_view
    util.return %6 : !hal.buffer_view
  }
}
