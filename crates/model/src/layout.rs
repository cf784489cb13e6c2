//! (to be filled: the layout data types move here from their producer)
