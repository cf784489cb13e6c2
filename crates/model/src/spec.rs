//! (to be filled: the spec data types move here from their producer)
