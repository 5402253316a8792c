mod util;

mod check;
mod downstream;
mod list;
mod shutdown;
