# LoRA rank 4 on every encoder block; the task head trains fully. runs/sst_lora gets model.keras (merged) and adapter.npz.
keras-bert finetune --task classify --init bert_tiny_en_uncased --train train.tsv --eval dev.tsv \
                    --lora-rank 4 --learning-rate 2e-3 --out runs/sst_lora
