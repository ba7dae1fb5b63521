from gctool._start import main

main()
