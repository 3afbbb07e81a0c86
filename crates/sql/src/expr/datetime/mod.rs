//! Dates and times: the value forms ([`temporal`]), INTERVAL arithmetic ([`interval`]),
//! the date/time function library ([`functions`]) and DATE_FORMAT/STR_TO_DATE formats
//! ([`format`]). Pure computation on values; binding these calls is `bind::datetime`.

pub mod format;
pub mod functions;
pub mod interval;
pub mod temporal;
