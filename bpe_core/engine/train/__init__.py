"""Training: the trainer, its pair table and heap, mirrors, and the chunk counts it learns from."""
