from gctool._start import main

if __name__ == "__main__":  # not when a fork server or spawn re-imports it (__mp_main__)
    main()
