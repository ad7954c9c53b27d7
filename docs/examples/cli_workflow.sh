# The command line, from raw text to a served model (docs/guides/command-line.md).
# Runs in the TensorFlow pass: its export steps then run in the same process (on JAX or torch, `keras-bert export`
# starts a TensorFlow child process). The files it reads: my_texts/ (plain text), train.tsv and dev.tsv
# (a `sentence` and a `label` column).

# --8<-- [start:vocab]
keras-bert vocab --corpus my_texts/ --size 2000 --out vocab.txt
# --8<-- [end:vocab]

# --8<-- [start:pretrain]
keras-bert pretrain --corpus my_texts/ --vocab vocab.txt --size tiny \
    --steps 10 --checkpoint-every 10 --batch-size 16 --sequence-length 64 --out runs/tiny
# --8<-- [end:pretrain]

# --8<-- [start:finetune]
keras-bert finetune --task classify --init runs/tiny --train train.tsv --eval dev.tsv \
    --epochs 1 --sequence-length 64 --out runs/sst
# --8<-- [end:finetune]

# --8<-- [start:predict]
keras-bert predict runs/sst "a charming and moving film." "dull, clumsy and far too long."
# --8<-- [end:predict]

# --8<-- [start:distill]
keras-bert distill --teacher runs/sst --train train.tsv --student-layers 1 --epochs 1 --out runs/student
# --8<-- [end:distill]

# --8<-- [start:export]
keras-bert export runs/sst --out saved_models/sst                 # a SavedModel that takes raw strings
keras-bert predict saved_models/sst "a gorgeous, witty, seductive movie."
# --8<-- [end:export]

# --8<-- [start:convert]
keras-bert convert runs/sst sst_hf/ --to hf          # a transformers BertForSequenceClassification folder
keras-bert convert sst_hf/ sst_again.keras           # and back
# --8<-- [end:convert]

# --8<-- [start:embed]
# all-MiniLM-L6-v2/: the sentence-transformers folder, e.g. from
#   huggingface-cli download sentence-transformers/all-MiniLM-L6-v2 --local-dir all-MiniLM-L6-v2
keras-bert embed all-MiniLM-L6-v2/ "A man is eating food." "Someone is eating a meal."
# --8<-- [end:embed]
