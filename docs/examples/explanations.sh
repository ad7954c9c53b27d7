# `keras-bert explain` (docs/guides/explanations.md): token attributions of a fine-tuned classifier.

# --8<-- [start:explain]
keras-bert finetune --task classify --init bert_tiny_en_uncased \
    --train train.tsv --eval dev.tsv --epochs 3 --learning-rate 5e-5 --out runs/reviews
keras-bert explain runs/reviews --out explained \
    "a charming, clever movie." "the plot was dull and the script was weak."
# --8<-- [end:explain]

# --8<-- [start:options]
keras-bert explain runs/reviews --out explained_negative --target negative --baseline mask \
    --steps 32 --integration riemann_trapezoid "a charming, clever movie."
keras-bert explain runs/reviews --out explained_quick --method grad_x_input \
    "the plot was dull and the script was weak."
# --8<-- [end:options]

# --8<-- [start:faithfulness]
keras-bert explain runs/reviews --out explained_curve --deletion-curve --deletion-words 3 \
    "a charming, clever movie." "the plot was dull and the script was weak." "a tedious, clumsy film."
# --8<-- [end:faithfulness]
