//! (to be filled: the db data types move here from their producer)
