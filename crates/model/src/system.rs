//! (to be filled: the system data types move here from their producer)
