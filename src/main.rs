fn main() -> std::process::ExitCode {
    mcp_defer::cli::main()
}
