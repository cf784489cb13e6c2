//! (to be filled: the iopath data types move here from their producer)
