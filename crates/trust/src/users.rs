//! Account names for messages: "owned by nobody (uid 65534)".

/// The name of the account `uid` (getpwuid_r), if it has one.
pub fn user_name(uid: u32) -> Option<String> {
    // SAFETY: an all-zero passwd is a valid value of the plain C struct.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to a live buffer of the stated length; pw_name points into
    // buf, and is read before buf is dropped.
    unsafe {
        let rc = libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out);
        if rc != 0 || out.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(pw.pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// A user's name, or `uid N` without one.
pub fn name(uid: u32) -> String {
    user_name(uid).unwrap_or_else(|| format!("uid {uid}"))
}
