module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "...", cpu_features = "...", data_layout = "...", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = ..., target_triple = "...", ukernels = "none"}>]> : !hal.device
  hal.executable private @matmul_dispatch_0 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "...", cpu_features = "...", data_layout = "...", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = ..., target_triple = "...", ukernels = "none"}>) {
      hal.executable.export public @matmul_dispatch_0_pack_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @matmul_dispatch_0_pack_f32() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DataTiling>>} {
          %c0 = arith.constant 0 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : memref<256x512xf32, #hal.descriptor_type<storage_buffer>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c0) flags(Indirect) : memref<32x512x8x1xf32, #hal.descriptor_type<storage_buffer>>
          %2 = iree_codegen.load_from_buffer %0 : memref<256x512xf32, #hal.descriptor_type<storage_buffer>> -> tensor<256x512xf32>
          %3 = tensor.empty() : tensor<32x512x8x1xf32>
          %pack = linalg.pack %2 inner_dims_pos = [0, 1] inner_tiles = [8, 1] into %3 {lowering_config = #iree_cpu.lowering_config<distribution = [16, 64], vector_common_parallel = [1, 16]>} : tensor<256x512xf32> -> tensor<32x512x8x1xf32>
          iree_codegen.store_to_buffer %pack, %1 : tensor<32x512x8x1xf32> into memref<32x512x8x1xf32, #hal.descriptor_type<storage_buffer>>
          return
        }
        iree_codegen.dispatch_config @matmul_dispatch_0_pack_f32 {
        ^bb0(%arg0: !hal.device):
          %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
          iree_codegen.yield %x, %y, %z : index, index, index
        }
      }
    }
  }
  hal.executable private @matmul_dispatch_1 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "...", cpu_features = "...", data_layout = "...", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = ..., target_triple = "...", ukernels = "none"}>) {
      hal.executable.export public @matmul_dispatch_1_pack_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @matmul_dispatch_1_pack_f32() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DataTiling>>} {
          %c0 = arith.constant 0 : index
          %c524288 = arith.constant 524288 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : memref<512x384xf32, #hal.descriptor_type<storage_buffer>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c524288) flags(Indirect) : memref<12x512x32x1xf32, strided<[16384, 32, 1, 1], offset: ?>, #hal.descriptor_type<storage_buffer>>
          %2 = iree_codegen.load_from_buffer %0 : memref<512x384xf32, #hal.descriptor_type<storage_buffer>> -> tensor<512x384xf32>
          %3 = tensor.empty() : tensor<12x512x32x1xf32>
          %pack = linalg.pack %2 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [32, 1] into %3 {lowering_config = #iree_cpu.lowering_config<distribution = [6, 64], vector_common_parallel = [1, 1]>} : tensor<512x384xf32> -> tensor<12x512x32x1xf32>
          iree_codegen.store_to_buffer %pack, %1 : tensor<12x512x32x1xf32> into memref<12x512x32x1xf32, strided<[16384, 32, 1, 1], offset: ?>, #hal.descriptor_type<storage_buffer>>
          return
        }
        iree_codegen.dispatch_config @matmul_dispatch_1_pack_f32 {
        ^bb0(%arg0: !hal.device):
          %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
          iree_codegen.yield %x, %y, %z : index, index, index
        }
      }
    }
  }
  hal.executable private @matmul_dispatch_2 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "...", cpu_features = "...", data_layout = "...", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = ..., target_triple = "...", ukernels = "none"}>) {
      hal.executable.export public @matmul_dispatch_2_mmt4d_32x12x512x8x32x1_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @matmul_dispatch_2_mmt4d_32x12x512x8x32x1_f32() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<Mmt4dTilingExpert>>} {
          %cst = arith.constant 0.000000e+00 : f32
          %c0 = arith.constant 0 : index
          %c524288 = arith.constant 524288 : index
          %c1310720 = arith.constant 1310720 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : memref<32x512x8x1xf32, #hal.descriptor_type<storage_buffer>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c524288) flags("ReadOnly|Indirect") : memref<12x512x32x1xf32, strided<[16384, 32, 1, 1], offset: ?>, #hal.descriptor_type<storage_buffer>>
          %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c1310720) flags(Indirect) : memref<32x12x8x32xf32, strided<[3072, 256, 32, 1], offset: ?>, #hal.descriptor_type<storage_buffer>>
          %3 = iree_codegen.load_from_buffer %0 : memref<32x512x8x1xf32, #hal.descriptor_type<storage_buffer>> -> tensor<32x512x8x1xf32>
          %4 = iree_codegen.load_from_buffer %1 : memref<12x512x32x1xf32, strided<[16384, 32, 1, 1], offset: ?>, #hal.descriptor_type<storage_buffer>> -> tensor<12x512x32x1xf32>
          %5 = tensor.empty() : tensor<32x12x8x32xf32>
          %6 = linalg.fill {lowering_config = #iree_cpu.lowering_config<vector_common_parallel = [1, 1, 8, 32]>} ins(%cst : f32) outs(%5 : tensor<32x12x8x32xf32>) -> tensor<32x12x8x32xf32>
          %7 = linalg.mmt4d {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)>], lowering_config = #iree_cpu.lowering_config<distribution = [4, 2, 0, 0, 0, 0], vector_common_parallel = [1, 1, 0, 8, 32, 0], vector_reduction = [0, 0, 1, 0, 0, 1]>, tdsl.layout = "mmt4d_8x32x1", tdsl.layout_rule = 0 : i64} ins(%3, %4 : tensor<32x512x8x1xf32>, tensor<12x512x32x1xf32>) outs(%6 : tensor<32x12x8x32xf32>) -> tensor<32x12x8x32xf32>
          iree_codegen.store_to_buffer %7, %2 : tensor<32x12x8x32xf32> into memref<32x12x8x32xf32, strided<[3072, 256, 32, 1], offset: ?>, #hal.descriptor_type<storage_buffer>>
          return
        }
        iree_codegen.dispatch_config @matmul_dispatch_2_mmt4d_32x12x512x8x32x1_f32 {
        ^bb0(%arg0: !hal.device):
          %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
          iree_codegen.yield %x, %y, %z : index, index, index
        }
      }
    }
  }
  hal.executable private @matmul_dispatch_3 {
    hal.executable.variant public @embedded_elf_x86_64 target(<"llvm-cpu", "embedded-elf-x86_64", {cpu = "...", cpu_features = "...", data_layout = "...", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = ..., target_triple = "...", ukernels = "none"}>) {
      hal.executable.export public @matmul_dispatch_3_unpack_f32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @matmul_dispatch_3_unpack_f32() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DataTiling>>} {
          %c1310720 = arith.constant 1310720 : index
          %c0 = arith.constant 0 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c1310720) flags("ReadOnly|Indirect") : memref<32x12x8x32xf32, strided<[3072, 256, 32, 1], offset: ?>, #hal.descriptor_type<storage_buffer>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c0) flags(Indirect) : memref<256x384xf32, #hal.descriptor_type<storage_buffer>>
          %2 = iree_codegen.load_from_buffer %0 : memref<32x12x8x32xf32, strided<[3072, 256, 32, 1], offset: ?>, #hal.descriptor_type<storage_buffer>> -> tensor<32x12x8x32xf32>
          %3 = tensor.empty() : tensor<256x384xf32>
          %unpack = linalg.unpack %2 inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %3 {lowering_config = #iree_cpu.lowering_config<distribution = [64, 64], vector_common_parallel = [8, 32]>} : tensor<32x12x8x32xf32> -> tensor<256x384xf32>
          iree_codegen.store_to_buffer %unpack, %1 : tensor<256x384xf32> into memref<256x384xf32, #hal.descriptor_type<storage_buffer>>
          return
        }
        iree_codegen.dispatch_config @matmul_dispatch_3_unpack_f32 {
        ^bb0(%arg0: !hal.device):
          %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
          iree_codegen.yield %x, %y, %z : index, index, index
        }
      }
    }
  }
  util.func public @matmul(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @matmul(%input0: tensor<256x512xf32>, %input1: tensor<512x384xf32>) -> (%output0: tensor<256x384xf32>)"}} {
    %c1703936 = arith.constant 1703936 : index
    %c393216 = arith.constant 393216 : index
    %c0 = arith.constant 0 : index
    %c786432 = arith.constant 786432 : index
    %c524288 = arith.constant 524288 : index
    %c384 = arith.constant 384 : index
    %c512 = arith.constant 512 : index
    %c256 = arith.constant 256 : index
    %element_type_f32 = hal.element_type<f32> : i32
    %dense_row_major = hal.encoding_type<dense_row_major> : i32
    hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c256, %c512]) type(%element_type_f32) encoding(%dense_row_major)
    %0 = stream.tensor.import on(#hal.device.affinity<@__device_0>) %arg0 : !hal.buffer_view -> tensor<256x512xf32> in !stream.resource<external>{%c524288}
    hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c512, %c384]) type(%element_type_f32) encoding(%dense_row_major)
    %1 = stream.tensor.import on(#hal.device.affinity<@__device_0>) %arg1 : !hal.buffer_view -> tensor<512x384xf32> in !stream.resource<external>{%c786432}
    %result, %result_timepoint = stream.resource.alloca uninitialized on(#hal.device.affinity<@__device_0>) : !stream.resource<external>{%c393216} => !stream.timepoint
    %result_0, %result_timepoint_1 = stream.resource.alloca uninitialized on(#hal.device.affinity<@__device_0>) : !stream.resource<transient>{%c1703936} => !stream.timepoint
    %2 = stream.timepoint.join max(%result_timepoint, %result_timepoint_1) => !stream.timepoint
    %3 = stream.cmd.execute on(#hal.device.affinity<@__device_0>) await(%2) => with(%0 as %arg2: !stream.resource<external>{%c524288}, %1 as %arg3: !stream.resource<external>{%c786432}, %result as %arg4: !stream.resource<external>{%c393216}, %result_0 as %arg5: !stream.resource<transient>{%c1703936}) {
      stream.cmd.concurrent {
        stream.cmd.dispatch @matmul_dispatch_0::@embedded_elf_x86_64::@matmul_dispatch_0_pack_f32 {
          ro %arg2[%c0 for %c524288] : !stream.resource<external>{%c524288},
          wo %arg5[%c0 for %c1703936] : !stream.resource<transient>{%c1703936}
        }
        stream.cmd.dispatch @matmul_dispatch_1::@embedded_elf_x86_64::@matmul_dispatch_1_pack_f32 {
          ro %arg3[%c0 for %c786432] : !stream.resource<external>{%c786432},
          wo %arg5[%c0 for %c1703936] : !stream.resource<transient>{%c1703936}
        }
      }
      stream.cmd.dispatch @matmul_dispatch_2::@embedded_elf_x86_64::@matmul_dispatch_2_mmt4d_32x12x512x8x32x1_f32 {
        ro %arg5[%c0 for %c1703936] : !stream.resource<transient>{%c1703936},
        wo %arg5[%c0 for %c1703936] : !stream.resource<transient>{%c1703936}
      }
      stream.cmd.dispatch @matmul_dispatch_3::@embedded_elf_x86_64::@matmul_dispatch_3_unpack_f32 {
        ro %arg5[%c0 for %c1703936] : !stream.resource<transient>{%c1703936},
        wo %arg4[%c0 for %c393216] : !stream.resource<external>{%c393216}
      }
    } => !stream.timepoint
    %4 = stream.resource.dealloca on(#hal.device.affinity<@__device_0>) await(%3) => %result_0 : !stream.resource<transient>{%c1703936} => !stream.timepoint
    %5 = stream.timepoint.await %4 => %result : !stream.resource<external>{%c393216}
    %6 = stream.tensor.export on(#hal.device.affinity<@__device_0>) %5 : tensor<256x384xf32> in !stream.resource<external>{%c393216} -> !hal.buffer_view
    util.return %6 : !hal.buffer_view
  }
}
