"""Programs: what a user passes to tdsl, loaded, described and fed.

A program is an ``.onnx`` model (exported by ``torch.onnx.export`` or any other frontend),
an ``.mlir`` file in the torch/ONNX dialects as ``iree-import-onnx`` writes it
(``func.func @main_graph(%arg0: !torch.vtensor<[1,128],si64>)``), or a plain linalg
``.mlir`` with builtin tensor signatures. ``iree-compile`` reads all three kinds directly;
an ``.onnx`` model is brought to MLIR first. One module per job:

* :mod:`~tdsl.programs.program`: the :class:`~tdsl.programs.program.Program` value and
  :class:`~tdsl.programs.program.ParameterArchive`.
* :mod:`~tdsl.programs.load`: :func:`~tdsl.programs.load.load_program` (``.onnx`` imported
  into a cache, ``.mlir`` read; ``--dim NAME=SIZE``; static shapes checked) and
  :func:`~tdsl.programs.load.program_of`.
* :mod:`~tdsl.programs.onnx_import`: ``iree-import-onnx`` under a timeout, and the fixes
  of the ONNX forms IREE 3.13's importer gets wrong.
* :mod:`~tdsl.programs.bool_constants`: boolean constants stored as u8 (data tiling cannot
  encode i1).
* :mod:`~tdsl.programs.weights`: stripped weights drawn again from a seed.
* :mod:`~tdsl.programs.parameters`: parameter archives (``.irpa``): weights read at load.
* :mod:`~tdsl.programs.quantization`: quantization roles of inputs, steps of outputs.
* :mod:`~tdsl.programs.signatures`: arguments and results of every public function.
* :mod:`~tdsl.programs.inputs`: seeded inputs that respect integer semantics, or inputs
  read from ``.npz`` / ``.npy``.
* :mod:`~tdsl.programs.reference`: the onnxruntime reference, and where it is none.

Requires ``iree-base-compiler`` (parsing types, through :mod:`tdsl.bindings`); ``.onnx``
models and the onnxruntime reference need ``pip install 'tdsl[onnx]'``.
"""
