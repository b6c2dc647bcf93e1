"""Exports the peer-comparison zoo: seven ``transformers`` architectures at deployed sizes,
random weights, batch 1, f32, weights stripped as the example models' are.

NEEDS PyTorch (and ``transformers``, ``onnx``, ``onnxscript``); tdsl and its tests never
import torch. It was run once to write the committed ``benchmarks/zoo/<name>/model.onnx``;
``benchmarks/peers.py`` and the tests only read those. To re-run it, in the throwaway
environment ``examples/models/export.py`` describes (never tdsl's .venv):

    /tmp/torchenv/bin/python benchmarks/zoo/export.py              # all seven
    /tmp/torchenv/bin/python benchmarks/zoo/export.py resnet18     # one

Exporting and stripping are ``examples/models/export.py``'s (``export_stripped``: dynamo
exporter, static shapes, every float initializer of 16 or more elements stripped with a
refill recipe); this file only holds the configurations.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Callable

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("example_models_export", HERE.parents[1] / "examples/models/export.py")
assert _spec is not None and _spec.loader is not None
examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(examples)

TOKENS = 128
IMAGE = 224
Exported = tuple[nn.Module, tuple[torch.Tensor, ...], list[str], list[str]]


def image() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, 3, IMAGE, IMAGE),)


def minilm_l6() -> Exported:
    """BertModel at all-MiniLM-L6's size: hidden 384, 6 layers, 12 heads, FFN 1536, vocabulary
    30522, 128 tokens, called with its attention mask and token types; no pooler."""
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=30522,
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        attn_implementation="eager",
    )
    model = BertModel(config, add_pooling_layer=False).eval()

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor):  # type: ignore[no-untyped-def]
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, return_dict=False
            )[0]

    ids = torch.randint(0, config.vocab_size, (1, TOKENS), dtype=torch.int64)
    mask = torch.ones(1, TOKENS, dtype=torch.int64)
    types = torch.zeros(1, TOKENS, dtype=torch.int64)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    return Encoder().eval(), (ids, mask, types), names, ["last_hidden_state"]


def gpt2() -> Exported:
    """GPT2Model: 2 layers, hidden 768, 12 heads, GPT-2's vocabulary and positions, 128
    tokens, called with its attention mask."""
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config(n_layer=2, n_embd=768, n_head=12, attn_implementation="eager")
    model = examples.Gpt2WithMask(GPT2Model(config)).eval()
    ids = torch.randint(0, config.vocab_size, (1, TOKENS), dtype=torch.int64)
    mask = torch.ones(1, TOKENS, dtype=torch.int64)
    return model, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state"]


def vit() -> Exported:
    """ViTModel: 224x224 image, 16x16 patches, 2 layers, hidden 768, 12 heads, MLP 3072, no pooler."""
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(
        image_size=IMAGE, patch_size=16, hidden_size=768, num_hidden_layers=2, num_attention_heads=12,
        attn_implementation="eager",
    )  # fmt: skip
    model = ViTModel(config, add_pooling_layer=False).eval()
    return examples.FirstOutput(model).eval(), image(), ["pixel_values"], ["last_hidden_state"]


def resnet18() -> Exported:
    """ResNetForImageClassification as ResNet-18: basic blocks, depths [2, 2, 2, 2], widths
    [64, 128, 256, 512], 1000 classes, BatchNorm as if trained."""
    from transformers import ResNetConfig, ResNetForImageClassification

    config = ResNetConfig(
        embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2], layer_type="basic", num_labels=1000
    )
    model = examples.randomize_norms(ResNetForImageClassification(config)).eval()
    return examples.FirstOutput(model).eval(), image(), ["pixel_values"], ["logits"]


def mobilenet_v2() -> Exported:
    """MobileNetV2ForImageClassification, depth multiplier 1.0, all 17 inverted residuals,
    1000 classes, BatchNorm as if trained."""
    from transformers import MobileNetV2Config, MobileNetV2ForImageClassification

    config = MobileNetV2Config(image_size=IMAGE, depth_multiplier=1.0, num_labels=1000)
    model = examples.randomize_norms(MobileNetV2ForImageClassification(config)).eval()
    return examples.FirstOutput(model).eval(), image(), ["pixel_values"], ["logits"]


def convnext() -> Exported:
    """ConvNextForImageClassification: depths [1, 1, 3, 1], widths [96, 192, 384, 768],
    1000 classes, layer scales as if trained."""
    from transformers import ConvNextConfig, ConvNextForImageClassification

    config = ConvNextConfig(image_size=IMAGE, depths=[1, 1, 3, 1], num_labels=1000)
    model = examples.randomize_norms(ConvNextForImageClassification(config)).eval()
    return examples.FirstOutput(model).eval(), image(), ["pixel_values"], ["logits"]


def whisper_encoder() -> Exported:
    """WhisperModel(...).encoder at whisper-tiny's size: 80 mel bins x 1000 frames (500
    positions after the stride-2 conv), 4 layers, d_model 384, 6 heads, FFN 1536."""
    from transformers import WhisperConfig, WhisperModel

    config = WhisperConfig(
        num_mel_bins=80,
        d_model=384,
        encoder_layers=4,
        encoder_attention_heads=6,
        encoder_ffn_dim=1536,
        decoder_layers=1,
        max_source_positions=500,
        attn_implementation="eager",
    )
    encoder = WhisperModel(config).encoder.eval()
    return examples.FirstOutput(encoder).eval(), (torch.randn(1, 80, 1000),), ["input_features"], ["last_hidden_state"]


MODELS: dict[str, Callable[[], Exported]] = {
    "minilm_l6": minilm_l6,
    "gpt2": gpt2,
    "vit": vit,
    "resnet18": resnet18,
    "mobilenet_v2": mobilenet_v2,
    "convnext": convnext,
    "whisper_encoder": whisper_encoder,
}
OPSET = 18
"""Opset 18 for all: GPT-2, MobileNetV2's TF padding and global average pools have no clean
opset-17 form (see ``examples/models/export.py``)."""


def export(name: str) -> None:
    torch.manual_seed(0)
    module, args, inputs, outputs = MODELS[name]()
    description = f"tdsl zoo model {name!r} (benchmarks/zoo/export.py), weights stripped"
    summary = examples.export_stripped(module, args, inputs, outputs, OPSET, HERE / name / "model.onnx", description)
    print(f"{name}: {summary}", flush=True)


if __name__ == "__main__":
    for name in sys.argv[1:] or list(MODELS):
        export(name)
