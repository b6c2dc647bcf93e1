"""Exports the example models as a frontend hands them to IREE, then strips their weights.

NEEDS PyTorch (and ``transformers``, ``onnx``, ``onnxscript``); tdsl itself and its tests
never import torch. It was run once to produce the committed ``<name>/model.onnx`` files;
the tests only read those. To re-run it, in a throwaway environment (never tdsl's .venv):

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch==2.13.0 transformers onnx onnxscript numpy
    /tmp/torchenv/bin/python examples/models/export.py            # all models
    /tmp/torchenv/bin/python examples/models/export.py bert       # one

Each model is built with random weights (no download), exported with ``torch.onnx.export``
(opset 17, static shapes, batch 1), and saved with every floating-point initializer of 16
or more elements STRIPPED: the tensor keeps its name, dims and data type, its data is
removed, and its ``doc_string`` holds a refill recipe measured from the exported values
(``tdsl.stripped {"mean": .., "std": .., "min": .., "max": ..}`` or ``{"value": c}`` for a
constant tensor such as a LayerNorm scale). Integer tensors (shapes, position ids) and small
tensors keep their data. :func:`tdsl.programs.weights.refill_weights` draws the stripped
tensors again from a seeded generator (normal(mean, std) clipped to [min, max]), so the
refilled model behaves like a freshly initialised one: softmax and layernorm stay sane.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

HERE = Path(__file__).resolve().parent
OPSET = 17
STRIP_MARKER = "tdsl.stripped"
MIN_STRIPPED_ELEMENTS = 16
SEQ = 64


# ---------------------------------------------------------------------------------------
# Models.


def bert() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """A BERT-class encoder: 2 layers, hidden 256, 4 heads, FFN 1024, sequence 64."""
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=1024,
        hidden_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=1024,
        max_position_embeddings=128,
        type_vocab_size=2,
        hidden_act="gelu",
        attn_implementation="eager",
    )
    model = BertModel(config, add_pooling_layer=True).eval()
    ids = torch.randint(0, config.vocab_size, (1, SEQ), dtype=torch.int64)
    mask = torch.ones(1, SEQ, dtype=torch.int64)
    types = torch.zeros(1, SEQ, dtype=torch.int64)

    class Wrapped(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor):  # type: ignore[no-untyped-def]
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, return_dict=False
            )
            return out[0], out[1]

    return (
        Wrapped().eval(),
        (ids, mask, types),
        ["input_ids", "attention_mask", "token_type_ids"],
        ["last_hidden_state", "pooler_output"],
    )


class Gpt2Block(nn.Module):
    """A GPT-2 decoder block with its token and position embeddings and final layernorm
    (hidden 256, 4 heads, MLP 1024, causal attention), written out op by op as GPT-2 does:
    layernorm -> fused QKV projection -> split (slices) -> head split (reshape + transpose)
    -> causal masked softmax attention -> output projection -> residual -> layernorm ->
    MLP with tanh GELU -> residual."""

    def __init__(self, vocab: int = 1024, hidden: int = 256, heads: int = 4, positions: int = 128) -> None:
        super().__init__()
        self.heads = heads
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(positions, hidden)
        self.ln_1 = nn.LayerNorm(hidden)
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.mlp_proj = nn.Linear(4 * hidden, hidden)
        self.ln_f = nn.LayerNorm(hidden)
        for module in self.modules():  # GPT-2's init: N(0, 0.02) weights, zero biases
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
                if isinstance(module, nn.Linear):
                    nn.init.zeros_(module.bias)
        self.register_buffer(
            "causal",
            torch.tril(torch.ones(positions, positions, dtype=torch.bool)).view(1, 1, positions, positions),
            persistent=False,
        )

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        b, t = input_ids.shape
        positions = torch.arange(t, dtype=torch.int64).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        h = self.ln_1(x)
        qkv, width = self.c_attn(h), x.shape[-1]
        # slices, not .split(): the exporter's opset-18 Split does not convert to opset 17
        q, k, v = qkv[:, :, :width], qkv[:, :, width : 2 * width], qkv[:, :, 2 * width :]
        d = width // self.heads
        q = q.view(b, t, self.heads, d).transpose(1, 2)
        k = k.view(b, t, self.heads, d).transpose(1, 2)
        v = v.view(b, t, self.heads, d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / (d**0.5)
        scores = scores.masked_fill(~self.causal[:, :, :t, :t], torch.finfo(scores.dtype).min)
        attn = torch.softmax(scores, dim=-1) @ v
        attn = attn.transpose(1, 2).contiguous().view(b, t, x.shape[-1])
        x = x + self.c_proj(attn)
        x = x + self.mlp_proj(nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return self.ln_f(x)


def gpt2_block() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    ids = torch.randint(0, 1024, (1, SEQ), dtype=torch.int64)
    return Gpt2Block().eval(), (ids,), ["input_ids"], ["hidden_states"]


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:  # the 1x1 projection shortcut
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.down(x))


class SmallResNet(nn.Module):
    """A ResNet-style conv stack on a 1x3x64x64 image: a stride-2 3x3 stem, a basic block,
    a stride-2 basic block with a 1x1 stride-2 projection shortcut, a 1x1 conv, global
    average pooling and a linear classifier. BatchNorm gets non-trivial statistics, as if
    trained; the exporter folds it into the convolutions (Conv with a bias)."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.layer1 = BasicBlock(32, 32, 1)
        self.layer2 = BasicBlock(32, 64, 2)
        self.head = nn.Sequential(nn.Conv2d(64, 128, 1, bias=True), nn.ReLU())
        self.fc = nn.Linear(128, classes)
        for module in self.modules():  # give BatchNorm non-trivial statistics, as if trained
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.data.uniform_(0.5, 1.5)
                module.bias.data.uniform_(-0.1, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.head(self.layer2(self.layer1(self.stem(x))))
        # a whole-image AveragePool, not adaptive_avg_pool2d: that one exports as an opset-18
        # ReduceMean that the exporter cannot convert to opset 17
        return self.fc(torch.flatten(nn.functional.avg_pool2d(x, x.shape[-2:]), 1))


def resnet() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    return SmallResNet().eval(), (torch.randn(1, 3, 64, 64),), ["image"], ["logits"]


# ---------------------------------------------------------------------------------------
# transformers architectures, small configs with random weights: the op forms of the real
# models (GPT-2's causal bool mask, ViT's patch conv, ResNet's strided convs and BatchNorm,
# MobileNetV2's depthwise convs and TF padding, ConvNeXt's 7x7 depthwise convs and layer
# scales, Whisper's 1-D convs) at sizes that compile in seconds.

IMAGE = 32


def randomize_norms(model: nn.Module) -> nn.Module:
    """BatchNorm statistics and affine parameters, and ConvNeXt layer scales, as if trained:
    at their initial values (mean 0, var 1, scale 1e-6) blocks are near-identities."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.1, 0.1)
            scale = getattr(module, "layer_scale_parameter", None)
            if isinstance(scale, nn.Parameter):
                scale.uniform_(0.5, 1.5)
    return model


class FirstOutput(nn.Module):
    """A transformers model called with ``return_dict=False``, its first output only (the
    last hidden state)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x, return_dict=False)[0]


class Gpt2WithMask(nn.Module):
    """GPT2Model called with its attention mask (as deployed): the causal and padding masks
    are computed in the graph from bool comparisons, not folded into a constant."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]


def gpt2() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """GPT2Model: 2 layers, hidden 64, 4 heads, sequence 32, eager attention, with the
    attention mask as an input (the causal bool mask is built in the graph)."""
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2, n_head=4, attn_implementation="eager")
    model = Gpt2WithMask(GPT2Model(config)).eval()
    ids = torch.randint(0, 512, (1, 32), dtype=torch.int64)
    mask = torch.ones(1, 32, dtype=torch.int64)
    return model, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state"]


def vit() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """ViTModel: 32x32 image, 8x8 patches (a stride-8 conv), 2 layers, hidden 64, 4 heads."""
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(
        image_size=IMAGE,
        patch_size=8,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        attn_implementation="eager",
    )
    model = ViTModel(config, add_pooling_layer=False).eval()
    return FirstOutput(model).eval(), (torch.randn(1, 3, IMAGE, IMAGE),), ["pixel_values"], ["last_hidden_state"]


def resnet_hf() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """ResNetModel: 7x7 stride-2 stem, max pool, two stages of basic blocks (16, 32
    channels, the second strided with a projection shortcut), BatchNorm as if trained."""
    from transformers import ResNetConfig, ResNetModel

    config = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    model = randomize_norms(ResNetModel(config)).eval()
    return FirstOutput(model).eval(), (torch.randn(1, 3, IMAGE, IMAGE),), ["pixel_values"], ["last_hidden_state"]


class MobileNetV2Head(nn.Module):
    """The stem and the first ``blocks`` inverted residuals of a MobileNetV2Model: every op
    form of the whole network (expansion, depthwise 3x3 with and without stride, projection,
    residual add, TF 'same' padding) with a third of its 17 blocks."""

    def __init__(self, model: nn.Module, blocks: int) -> None:
        super().__init__()
        self.stem = model.conv_stem
        self.blocks = nn.Sequential(*list(model.layer)[:blocks])

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        return self.blocks(self.stem(pixel_values))


def mobilenet_v2() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """MobileNetV2Model at depth multiplier 0.35, its stem and first 6 inverted residuals:
    depthwise 3x3 convs, ReLU6, TF 'same' padding, BatchNorm as if trained."""
    from transformers import MobileNetV2Config, MobileNetV2Model

    config = MobileNetV2Config(image_size=IMAGE, depth_multiplier=0.35)
    model = randomize_norms(MobileNetV2Model(config, add_pooling_layer=False)).eval()
    head = MobileNetV2Head(model, blocks=6).eval()
    return head, (torch.randn(1, 3, IMAGE, IMAGE),), ["pixel_values"], ["hidden_states"]


def convnext() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """ConvNextModel: 4x4 patch stem, two stages (16, 32 channels) of 7x7 depthwise conv,
    channels-last LayerNorm, pointwise MLP with GELU and a layer scale."""
    from transformers import ConvNextConfig, ConvNextModel

    config = ConvNextConfig(image_size=IMAGE, num_stages=2, hidden_sizes=[16, 32], depths=[1, 1])
    model = randomize_norms(ConvNextModel(config)).eval()
    return FirstOutput(model).eval(), (torch.randn(1, 3, IMAGE, IMAGE),), ["pixel_values"], ["last_hidden_state"]


def whisper_encoder() -> tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]:
    """WhisperModel(...).encoder: 16 mel bins x 64 frames, two 1-D convs (the second stride
    2), 1 layer, hidden 64, 4 heads."""
    from transformers import WhisperConfig, WhisperModel

    config = WhisperConfig(
        vocab_size=128,
        num_mel_bins=16,
        d_model=64,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_source_positions=32,
        max_target_positions=32,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
        attn_implementation="eager",
    )
    encoder = WhisperModel(config).encoder.eval()
    return FirstOutput(encoder).eval(), (torch.randn(1, 16, 64),), ["input_features"], ["last_hidden_state"]


MODELS = {
    "bert": bert,
    "gpt2_block": gpt2_block,
    "resnet": resnet,
    "gpt2": gpt2,
    "vit": vit,
    "resnet_hf": resnet_hf,
    "mobilenet_v2": mobilenet_v2,
    "convnext": convnext,
    "whisper_encoder": whisper_encoder,
}
# opset 17 writes an invalid GPT-2 (an opset-18 Split attribute); 18 is clean
# (and a MobileNetV2 whose TF-padding Pad has no opset-17 adapter)
OPSETS = {"gpt2": 18, "mobilenet_v2": 18}


# ---------------------------------------------------------------------------------------
# Export and strip.


def recipe(values: np.ndarray) -> dict[str, float]:
    """How to draw a tensor like ``values`` again: its constant, or its moments and range."""
    flat = values.astype(np.float64).ravel()
    if flat.min() == flat.max():
        return {"value": float(flat[0])}
    return {"mean": float(flat.mean()), "std": float(flat.std()), "min": float(flat.min()), "max": float(flat.max())}


def strip(model: onnx.ModelProto) -> int:
    """Removes the data of every float initializer with >= MIN_STRIPPED_ELEMENTS elements
    but two distinct values (a folded mask keeps its data) in place, leaving a refill recipe
    in its doc_string; returns how many it stripped."""
    count = 0
    for tensor in model.graph.initializer:
        if tensor.data_type not in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE):
            continue
        if int(np.prod(tensor.dims)) < MIN_STRIPPED_ELEMENTS:
            continue
        values = numpy_helper.to_array(tensor)
        if len(np.unique(values)) == 2:  # an additive mask (0 and a large negative): structure, not a weight
            continue
        tensor.doc_string = f"{STRIP_MARKER} {json.dumps(recipe(values), sort_keys=True)}"
        for field in ("raw_data", "float_data", "double_data", "int32_data"):
            tensor.ClearField(field)
        count += 1
    return count


def drop_debug_info(model: onnx.ModelProto) -> None:
    """Removes what the exporter records per node for debugging (the module path and the
    Python stack in ``metadata_props``, doc strings): most of a small model's bytes."""
    for node in model.graph.node:
        node.ClearField("metadata_props")
        node.ClearField("doc_string")
    for value in [*model.graph.value_info, *model.graph.input, *model.graph.output]:
        value.ClearField("metadata_props")


def export_stripped(
    module: nn.Module,
    args: tuple[torch.Tensor, ...],
    inputs: list[str],
    outputs: list[str],
    opset: int,
    out: Path,
    description: str,
) -> str:
    """Exports ``module`` called with ``args`` to ``out`` (checked, weights stripped, debug
    info dropped, ``description`` as its doc string); returns a one-line summary."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        full = Path(tmp) / "model.onnx"
        torch.onnx.export(
            module,
            args,
            str(full),
            input_names=inputs,
            output_names=outputs,
            opset_version=opset,
            dynamo=True,
            external_data=False,
        )
        model = onnx.load(str(full))
    onnx.checker.check_model(model)
    model.doc_string = description
    stripped = strip(model)
    drop_debug_info(model)
    onnx.save(model, str(out))
    return f"{stripped} initializers stripped, {out.stat().st_size} bytes, opset {model.opset_import[0].version}"


def export(name: str) -> None:
    torch.manual_seed(0)
    module, args, inputs, outputs = MODELS[name]()
    description = f"tdsl example model {name!r} (examples/models/export.py), weights stripped"
    summary = export_stripped(
        module, args, inputs, outputs, OPSETS.get(name, OPSET), HERE / name / "model.onnx", description
    )
    print(f"{name}: {summary}")


if __name__ == "__main__":
    for name in sys.argv[1:] or list(MODELS):
        export(name)
