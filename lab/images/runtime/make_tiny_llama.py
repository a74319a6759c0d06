"""Generate a tiny random Llama with a locally trained tokenizer, for serving tests.

The weights are random: answers are gibberish by design. What matters is that vLLM loads it
through the same code path as a real Llama checkpoint (config.json, safetensors, a fast
tokenizer with a chat template) in seconds and a few MB.
"""

from __future__ import annotations

import os
import pathlib
import sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

VOCAB_SIZE = 1024
SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", "<pad>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}{{ eos_token }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def training_corpus() -> list[str]:
    # Any sizeable local English/code text will do; the Python standard library is always there.
    stdlib = pathlib.Path(os.__file__).parent
    return [f.read_text(errors="ignore") for f in sorted(stdlib.glob("*.py"))[:200]]


def build_tokenizer() -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(training_corpus(), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        chat_template=CHAT_TEMPLATE,
    )


def main(out_dir: str) -> None:
    torch.manual_seed(0)
    tokenizer = build_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        # head_dim = 128 / 4 = 32: vLLM's CPU attention supports 32, 64, 80, ... but not 16.
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="float32",
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    params = sum(p.numel() for p in model.parameters())
    print(f"tiny llama: {params} parameters, vocab {len(tokenizer)} -> {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1])
