//! (to be filled: the target data types move here from their producer)
