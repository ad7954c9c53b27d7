"""The BERT family (docs/guides/bert-family.md): ALBERT, RoBERTa, DistilBERT and ELECTRA from Hugging Face folders."""

# Not shown on the page: the small test vocabularies (trained on Austen novels) that the folders below carry,
# as a real checkpoint folder carries its tokenizer files.
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "family_tokenizers"
shutil.copytree(FIXTURES / "albert", "tiny_albert", dirs_exist_ok=True)  # spiece.model
shutil.copytree(FIXTURES / "roberta", "tiny_roberta", dirs_exist_ok=True)  # vocab.json, merges.txt

# --8<-- [start:albert]
import numpy as np
import transformers

import keras_bert

# A random tiny ALBERT written by transformers; any Hugging Face ALBERT folder (albert/albert-base-v2) loads the same.
config = transformers.AlbertConfig(vocab_size=2000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=64)
transformers.AlbertModel(config).save_pretrained("tiny_albert")

backbone = keras_bert.AlbertBackbone.from_pretrained("tiny_albert")
tokenizer = keras_bert.SentencePieceTokenizer.from_pretrained("tiny_albert")  # spiece.model
packer = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=16)  # [CLS] A [SEP] B [SEP]

outputs = backbone(packer(["It is a truth universally acknowledged."]))
print(tuple(outputs["sequence_output"].shape), tuple(outputs["pooled_output"].shape))  # → (1, 16, 32) (1, 32)
# --8<-- [end:albert]

# --8<-- [start:roberta]
# RoBERTa: byte-level BPE (vocab.json + merges.txt, or tokenizer.json) and <s> A </s></s> B </s> inputs.
config = transformers.RobertaConfig(vocab_size=2001, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                    intermediate_size=64, max_position_embeddings=66)
transformers.RobertaModel(config).save_pretrained("tiny_roberta")

tokenizer = keras_bert.BytePairTokenizer.from_pretrained("tiny_roberta")
packer = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=16)  # <s> A </s></s> B </s>
classifier = keras_bert.BertClassifier(keras_bert.RobertaBackbone.from_pretrained("tiny_roberta"), num_classes=2)
print(tuple(classifier(packer(["Emma was not so foolish."])).shape))  # → (1, 2)
# --8<-- [end:roberta]

# --8<-- [start:others]
# DistilBERT and ELECTRA use BERT's WordPiece vocab.txt: BertTokenizer reads their folders.
vocabulary = "tiny_vocab.txt"  # the folder's vocab.txt in a real checkpoint
folders = {
    "tiny_distilbert": (keras_bert.DistilBertBackbone, transformers.DistilBertModel(
        transformers.DistilBertConfig(vocab_size=147, dim=32, n_layers=2, n_heads=2, hidden_dim=64))),
    "tiny_electra": (keras_bert.ElectraBackbone, transformers.ElectraModel(
        transformers.ElectraConfig(vocab_size=147, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=64))),
}
for folder, (backbone_class, hf_model) in folders.items():
    hf_model.save_pretrained(folder)
    shutil.copy(vocabulary, Path(folder) / "vocab.txt")
    backbone = backbone_class.from_pretrained(folder)
    print(type(backbone).__name__, backbone.input_names)
# → DistilBertBackbone ('token_ids', 'padding_mask')
# → ElectraBackbone ('token_ids', 'segment_ids', 'padding_mask')

# Task heads take every backbone; inputs a backbone does not read (DistilBERT: segment_ids) are dropped.
tagger = keras_bert.BertTokenClassifier(keras_bert.DistilBertBackbone.from_pretrained("tiny_distilbert"),
                                        num_classes=3)
tokenizer = keras_bert.BertTokenizer.from_pretrained("tiny_distilbert")
packer = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=8)
print(tuple(tagger(packer(["the film is good"])).shape))  # → (1, 8, 3)
# --8<-- [end:others]

# --8<-- [start:refused]
try:
    keras_bert.BertBackbone.from_pretrained("tiny_albert")
except ValueError as error:
    print(error)  # → is a checkpoint of ALBERT
# --8<-- [end:refused]
