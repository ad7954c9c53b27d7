# `keras-bert vocab` and `keras-bert pretrain` (docs/guides/pretraining.md): my_texts/
# and heldout/ hold plain text files; runs/mini gets model.keras, vocab.txt,
# config.json, history.csv, logs/ and checkpoints/.

# --8<-- [start:pretrain]
keras-bert vocab --corpus my_texts/ --size 8000 --out vocab.txt
keras-bert pretrain --corpus my_texts/ --eval-corpus heldout/ \
    --vocab vocab.txt --size mini --sequence-length 128 --batch-size 32 \
    --steps 5000 --checkpoint-every 500 --learning-rate 1e-3 \
    --masking whole-word --out runs/mini
# --8<-- [end:pretrain]

# The small-compute recipe (pre-LN, gated GELU, no biases, no dropout, 30% masking, MLM only):
# --8<-- [start:small-compute]
keras-bert pretrain --corpus my_texts/ --eval-corpus heldout/ \
    --vocab vocab.txt --size mini --sequence-length 128 --batch-size 32 \
    --steps 5000 --checkpoint-every 500 --learning-rate 1e-3 \
    --normalize-first --gated-feed-forward --no-biases --dropout 0 \
    --masking-rate 0.3 --sentence-task none --out runs/small-compute
# --8<-- [end:small-compute]
