//! (to be filled: the calib data types move here from their producer)
