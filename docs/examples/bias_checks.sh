# `keras-bert bias-check` and `keras-bert finetune --counterfactual-augmentation` (docs/guides/bias-checks.md).
# reviews.txt holds one text per line; my_pairs.tsv one term<TAB>term pair per line.

# --8<-- [start:check]
keras-bert finetune --task classify --init bert_tiny_en_uncased \
    --train train.tsv --eval dev.tsv --epochs 3 --learning-rate 5e-5 --out runs/checked
keras-bert bias-check runs/checked --file reviews.txt --out bias_report
# --8<-- [end:check]

# --8<-- [start:pairs]
keras-bert bias-check runs/checked --pairs builtin --pairs my_pairs.tsv \
    "Anna gave a superb performance." "He was the only good thing in it."
# --8<-- [end:pairs]

# --8<-- [start:augment]
keras-bert finetune --task classify --init bert_tiny_en_uncased \
    --train train.tsv --eval dev.tsv --epochs 3 --learning-rate 5e-5 \
    --counterfactual-augmentation builtin --out runs/checked_cda
keras-bert bias-check runs/checked_cda --file reviews.txt --out bias_report_cda
# --8<-- [end:augment]
