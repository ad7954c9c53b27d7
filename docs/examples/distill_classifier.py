"""Distillation from Python (docs/guides/distillation.md): a fine-tuned teacher, a shallower student, Distiller."""

# --8<-- [start:teacher]
import keras_bert
from keras_bert.preprocessing.task_data.classification_data import (
    classification_features,
    read_classification_data,
)

# The teacher: a fine-tuned classifier (here BERT-Base, fine-tuned briefly on train.tsv).
tokenizer = keras_bert.BertTokenizer.from_preset("bert_base_en_uncased")
train = read_classification_data("train.tsv", text_column="sentence", label_column="label")
train_features = classification_features(train, tokenizer, sequence_length=64)
label_names = train_features.info["label_names"]

teacher = keras_bert.BertClassifier.from_preset("bert_base_en_uncased", num_classes=2, label_names=label_names)
teacher.compile()
teacher.fit(train_features.dataset(32, shuffle=True), epochs=1, verbose=0)
# --8<-- [end:teacher]

# --8<-- [start:student]
# The student: the teacher with half its blocks (12 -> 6: blocks 0, 2, 4, 7, 9, 11), every weight copied.
student = keras_bert.student_from_teacher(teacher, num_layers=teacher.backbone.num_layers // 2)
print(type(student).__name__, student.label_names)  # → BertClassifier ['negative', 'positive']
# --8<-- [end:student]

# --8<-- [start:distill]
distiller = keras_bert.Distiller(teacher, student, temperature=2.0, alpha=0.5)
distiller.compile()  # AdamW and accuracy; the loss is the distiller's (soft targets + labels)
distiller.fit(train_features.dataset(32, shuffle=True), epochs=1, verbose=0)

# The result is distiller.student: a plain BertClassifier that saves, exports and serves like any other.
student.save("distilled_student.keras")
print(f"{student.count_params():,} parameters, the teacher's {teacher.count_params():,}")  # → parameters, the teacher's
# --8<-- [end:distill]
