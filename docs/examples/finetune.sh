# `keras-bert finetune` and `keras-bert predict` (docs/guides/fine-tuning.md). The
# --out folder holds model.keras, vocab.txt, finetune.json (the options and held-out
# metrics), history.csv, logs/ and checkpoints/.

# --8<-- [start:classify]
keras-bert finetune --task classify --init bert_tiny_en_uncased \
    --train train.tsv --eval dev.tsv --text-column sentence --label-column label \
    --epochs 3 --learning-rate 5e-5 --out runs/sentiment
# --8<-- [end:classify]

# --8<-- [start:predict]
keras-bert predict runs/sentiment "a gorgeous, witty, seductive movie." \
    "the plot is a tedious mess."
# --8<-- [end:predict]
